package validators

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/untrusted"
)

// revert rejects a patch that throws away what the blame commit was for:
// reverting is a person's decision (redfix offers it as a revert pull
// request), not a fix. The gate reads the blame's changes to code
// (purpose.go) and holds the patch up against each: a patch that restores
// the lines that broke the test and keeps the rest of the culprit (its new
// functions, its renames, its other changes) is a fix; one that removes or
// renames back what the culprit declared, or undoes every change it made to
// the code, is a revert. Its evidence names the changes, never a share of
// lines: a number to get under would teach disguise, not fixes.
func (v *Validators) revert(_ context.Context, c *candidate) (task.Gate, error) {
	if strings.TrimSpace(c.in.BlameDiff) == "" {
		return pass("no blame diff to compare with: the patch cannot be a revert of it"), nil
	}
	if c.parseErr != nil {
		return fail(fmt.Sprintf("the patch cannot be read as a unified diff: %v", c.parseErr)), nil
	}
	blame, err := unidiff.Parse(c.in.BlameDiff)
	if err != nil {
		return pass(fmt.Sprintf("the blame diff cannot be read (%v): nothing to compare with", err)), nil
	}
	name := blameName(c.in.Task)
	changes := changesOf(blame, c.codeOf)
	if len(changes) == 0 {
		return pass(fmt.Sprintf("not a revert of %s: it changes no code outside tests", name)), nil
	}
	p := judgePurpose(changes, c.files, declaredIn(c.in.Dir, changedCode(blame, c.files, c.codeOf), c.codeOf))
	switch {
	case len(p.thrown) > 0:
		return fail(fmt.Sprintf("reverts %s: the patch %s. A fix keeps what the culprit was for (its new code, its renames) and mends the lines that broke the test; undoing the culprit is a revert pull request's job.",
			name, strings.Join(p.thrown, "; "))), nil
	case p.revert():
		return fail(fmt.Sprintf("reverts %s: the patch undoes every change it made to the code (%s), so nothing of what it was for is left: that is a revert, which redfix offers as a revert pull request, not as a fix.",
			name, strings.Join(p.restored, ", "))), nil
	}
	detail := fmt.Sprintf("not a revert of %s: the patch keeps %s", name, strings.Join(p.kept, ", "))
	if len(p.restored) > 0 {
		detail += fmt.Sprintf("; it restores the lines %s changed in %s", name, strings.Join(p.restored, ", "))
	}
	return pass(detail + "."), nil
}

// changedCode are the code files the blame or the patch touch, as they are
// named after both (what the patched tree holds).
func changedCode(blame, patch []unidiff.File, read codeOf) []string {
	seen := map[string]bool{}
	var out []string
	for _, fs := range [][]unidiff.File{blame, patch} {
		for _, f := range fs {
			p := f.NewPath
			if p == "" || seen[p] {
				continue
			}
			if _, ok := read(p); !ok {
				continue
			}
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// declaredIn tells whether a name is declared in one of the files, read
// beneath dir as untrusted (a file missing or unreadable declares nothing).
func declaredIn(dir string, files []string, read codeOf) func(string) bool {
	names := map[string]bool{}
	for _, p := range files {
		src, err := untrusted.ReadFile(dir, p, maxSourceBytes)
		if err != nil {
			continue
		}
		kind, _ := read(p)
		for _, l := range strings.Split(string(src), "\n") {
			if n := kind.declares(l); n != "" {
				names[n] = true
			}
		}
	}
	return func(n string) bool { return names[n] }
}

// trivial lines carry no meaning of their own.
func trivial(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

// maxSourceBytes bounds a file of code the revert gate reads; a larger one
// declares nothing.
const maxSourceBytes = 4 << 20

// codeOf is how the revert gate reads the file p of the candidate's
// language: tests are not code; the driver's declarations (Declarations),
// else its source files as code that declares nothing.
func (c *candidate) codeOf(p string) (code, bool) {
	if c.isTestFile(p) {
		return code{}, false
	}
	if d, ok := c.driver().(Declarations); ok {
		declared, comments, ok := d.DeclarationRule(p)
		return code{declared, comments}, ok
	}
	return code{}, c.isSource(p)
}

func blameName(t task.Task) string {
	b := t.Bisection
	if b.Blame == "" {
		return "the blame commit"
	}
	name := task.Short(b.Blame)
	if b.Subject != "" {
		name += fmt.Sprintf(" (%q)", b.Subject)
	}
	return name
}
