package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/linebound"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/untrusted"
	"github.com/redfix/redfix/pkg/workspace"
)

// Patcher turns natural-language edit instructions into SEARCH/REPLACE
// blocks for one file (the edit action's sub-agent).
type Patcher interface {
	Blocks(ctx context.Context, path, content, instructions string) (string, error)
}

// buildTimeout bounds each command of the static analysis run after an
// edit.
const buildTimeout = 3 * time.Minute

func (s *session) edit(ctx context.Context, args EditArgs) (Observation, error) {
	if strings.TrimSpace(args.Path) == "" {
		return problem("A path is required: edit changes one file."), nil
	}
	abs, rel, bad := s.resolve(args.Path)
	if bad != nil {
		return *bad, nil
	}
	if rel == "." {
		return problem("%q is the repository root, not a file.", args.Path), nil
	}
	if r := pathsFrom(ctx); r != nil {
		if ok, rule := r.PathAllowed(rel); !ok {
			return problem("%s may not be changed: refused by %s. A patch that changes it is rejected; fix the failure in files the repository lets redfix change.", rel, rule), nil
		}
	}
	exists := true
	var content string
	mode := fs.FileMode(0o644)
	info, err := untrusted.Lstat(s.ws.Dir, rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		exists = false
	case err != nil && !errors.Is(err, untrusted.ErrLink):
		return problem("Cannot read %s: %v.", rel, err), nil
	case err == nil && info.IsDir():
		return problem("%s is a directory; edit changes one file.", rel), nil
	default:
		if content, err = s.ws.ReadText(rel, maxReadFile); err != nil {
			return s.unreadable(ctx, rel, err), nil
		}
		mode = info.Mode().Perm()
	}

	text := args.Blocks
	via := ""
	if strings.TrimSpace(text) == "" {
		switch {
		case strings.TrimSpace(args.Instructions) == "":
			return problem("Give blocks (SEARCH/REPLACE) or instructions for %s.", rel), nil
		case s.h.patcher == nil:
			return problem("No patcher is configured to turn instructions into edits; give SEARCH/REPLACE blocks:\n%s", BlockFormat), nil
		}
		text, err = s.h.patcher.Blocks(ctx, rel, content, args.Instructions)
		if err != nil {
			return Observation{}, fmt.Errorf("patcher writing blocks for %s: %w", rel, err)
		}
		via = " (written by the patcher from the instructions)"
	}
	blocks, err := ParseBlocks(text)
	if err != nil {
		return editFailed("The blocks%s for %s cannot be read: %v\nThe format is:\n%s", via, rel, err, BlockFormat), nil
	}
	if !exists {
		for i, b := range blocks {
			if strings.TrimSpace(b.Search) != "" {
				return editFailed("%s does not exist; block %d of %d searches it. To create the file, give one block with an empty SEARCH.%s",
					rel, i+1, len(blocks), s.suggestFiles(ctx, rel)), nil
			}
		}
	}
	if why := outOfBounds(blocks); why != "" {
		return editFailed("The edit%s of %s was not applied: %s. Write code as a person would.", via, rel, why), nil
	}
	updated, err := ApplyBlocks(content, blocks)
	if err != nil {
		return editFailed("The edit%s of %s was not applied: %v", via, rel, err), nil
	}
	if exists && updated == content {
		return editFailed("The blocks%s change nothing in %s.", via, rel), nil
	}
	if err := s.ws.WriteFile(rel, []byte(updated), mode); err != nil {
		if errors.Is(err, untrusted.ErrLink) || errors.Is(err, untrusted.ErrNotRegular) || errors.Is(err, workspace.ErrOutside) {
			return editFailed("%s cannot be written: %v.", rel, err), nil
		}
		return Observation{}, fmt.Errorf("write %s: %w", rel, err)
	}
	// The tests passed, if they did, without this change.
	s.oraclePassed = false
	if !exists {
		s.created(rel)
	}
	s.reindex(rel)

	diff, err := s.fileDiff(ctx, rel)
	if err != nil {
		return Observation{}, err
	}
	diags, old, err := s.diagnose(ctx, abs, rel)
	if err != nil {
		return Observation{}, err
	}
	var b strings.Builder
	verb := "Edited"
	if !exists {
		verb = "Created"
	}
	fmt.Fprintf(&b, "%s %s: %s applied%s.\n\n", verb, rel, plural(len(blocks), "block", "blocks"), via)
	shownDiff := clip.Middle(diff, max(s.h.cfg.OutputLimit/2, 1000))
	b.WriteString(shownDiff)
	switch checks := s.checksOf(rel); {
	case diags == "" && old == 0:
		fmt.Fprintf(&b, "\nStatic analysis (%s): clean.\n", checks)
	case diags == "":
		fmt.Fprintf(&b, "\nStatic analysis (%s): no new finding (%d finding(s) were there before this edit; they are not this edit's).\n", checks, old)
	default:
		b.WriteString("\nStatic analysis found problems this edit brought:\n" + diags + "\n")
		if old > 0 {
			fmt.Fprintf(&b, "(%d other finding(s) were there before this edit; they are not this edit's.)\n", old)
		}
	}
	return Observation{Content: b.String(), Edit: &EditResult{Applied: true, Diff: shownDiff, Diagnostics: diags}}, nil
}

func editFailed(format string, args ...any) Observation {
	o := problem(format, args...)
	o.Edit = &EditResult{Applied: false}
	return o
}

// fileDiff is one file's change against HEAD, a new file included.
func (s *session) fileDiff(ctx context.Context, rel string) (string, error) {
	out, err := s.ws.Repo.DiffPaths(ctx, []string{rel})
	if err != nil {
		return "", fmt.Errorf("diff of %s: %w", rel, err)
	}
	return out, nil
}

// checksOf names the static checks an edit of rel is held to: Go's tools
// for a Go file, its driver's for a file of the driver's language.
func (s *session) checksOf(rel string) string {
	if s.h.lang != nil && !strings.HasSuffix(rel, ".go") {
		if !s.h.lang.IsSource(rel) {
			return "none for this file"
		}
		if named, ok := s.h.lang.(interface{ Name() string }); ok {
			return "the " + named.Name() + " driver's checks"
		}
		return "the language driver's checks"
	}
	if !strings.HasSuffix(rel, ".go") {
		return "none for this file"
	}
	return "gofmt, go build, go vet"
}

// diagnose runs gofmt on an edited Go file, and go build then go vet on its
// package (in the module that holds it, nested ones too); another file of
// the language driver's, the driver's checks on it. It returns the
// findings that the task's commit does not have (the edit's), empty when
// there are none, and how many findings were there before. Files of no
// language have none.
func (s *session) diagnose(ctx context.Context, abs, rel string) (fresh string, old int, err error) {
	if s.h.lang != nil && !strings.HasSuffix(rel, ".go") {
		return s.diagnoseWith(ctx, s.h.lang, rel)
	}
	if !strings.HasSuffix(rel, ".go") {
		return "", 0, nil
	}
	mod, pkg, ok := s.packageOf(abs)
	if !ok {
		mod = s.ws.Dir
	}
	checks := func(root string) findings.Checks {
		c := findings.Checks{Timeout: buildTimeout}
		if f, err := filepath.Rel(mod, abs); err == nil {
			if _, err := os.Stat(filepath.Join(root, f)); err == nil {
				c.Gofmt = []string{filepath.ToSlash(f)}
			}
		}
		if ok {
			c.Build, c.Vet = []string{pkg}, []string{pkg}
		}
		return c
	}
	head, err := findings.Run(ctx, mod, checks(mod))
	if err != nil {
		return "", 0, fmt.Errorf("static analysis of %s: %w", rel, err)
	}
	if len(head) == 0 {
		return "", 0, nil
	}
	baseRoot, err := s.baseCheckout(ctx)
	if err != nil {
		return "", 0, err
	}
	baseMod := baseRoot
	if r, err := filepath.Rel(s.ws.Dir, mod); err == nil {
		baseMod = filepath.Join(baseRoot, r)
	}
	var base []findings.Finding
	if _, err := os.Stat(baseMod); err == nil {
		if base, err = findings.Run(ctx, baseMod, checks(baseMod)); err != nil {
			return "", 0, fmt.Errorf("static analysis of %s at %s: %w", rel, task.Short(s.t.Commit), err)
		}
	}
	return newFindings(head, base)
}

// diagnoseWith runs the driver's checks on the edited file, in the
// workspace and in a checkout of the task's commit.
func (s *session) diagnoseWith(ctx context.Context, l Language, rel string) (fresh string, old int, err error) {
	if !l.IsSource(rel) {
		return "", 0, nil
	}
	head, err := l.Check(ctx, s.ws.Dir, []string{rel})
	if err != nil {
		return "", 0, fmt.Errorf("static analysis of %s: %w", rel, err)
	}
	if len(head) == 0 {
		return "", 0, nil
	}
	baseRoot, err := s.baseCheckout(ctx)
	if err != nil {
		return "", 0, err
	}
	var base []findings.Finding
	if _, err := os.Stat(filepath.Join(baseRoot, filepath.FromSlash(rel))); err == nil {
		if base, err = l.Check(ctx, baseRoot, []string{rel}); err != nil {
			return "", 0, fmt.Errorf("static analysis of %s at %s: %w", rel, task.Short(s.t.Commit), err)
		}
	}
	return newFindings(head, base)
}

// newFindings are the findings of head that base does not have, as the
// edit's observation shows them, and how many were there before.
func newFindings(head, base []findings.Finding) (string, int, error) {
	news, old := findings.Compare(head, base)
	texts := findings.Texts(news)
	if len(texts) > 40 {
		texts = append(texts[:40], fmt.Sprintf("… and %d more", len(texts)-40))
	}
	return trimLines(strings.Join(texts, "\n"), 60), old, nil
}

// baseCheckout is a checkout of the task's commit next to the workspace,
// made once per episode, to tell an edit's findings from the old ones.
func (s *session) baseCheckout(ctx context.Context) (string, error) {
	if s.base == nil {
		ws, err := s.ws.Sibling(ctx, s.t.Commit, "")
		if err != nil {
			return "", fmt.Errorf("check out %s to compare findings: %w", task.Short(s.t.Commit), err)
		}
		s.base = ws
	}
	return s.base.Dir, nil
}

// packageOf finds the module holding the file at abs and the package's
// relative path ("./x/y") in it; ok is false outside any module or in
// directories the go command ignores.
func (s *session) packageOf(abs string) (mod, pkg string, ok bool) {
	dir := filepath.Dir(abs)
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			rel, err := filepath.Rel(d, dir)
			if err != nil {
				return "", "", false
			}
			for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
				if part == "testdata" || part == "vendor" || (part != "." && (strings.HasPrefix(part, "_") || strings.HasPrefix(part, "."))) {
					return "", "", false
				}
			}
			if rel == "." {
				return d, ".", true
			}
			return d, "./" + filepath.ToSlash(rel), true
		}
		if d == s.ws.Dir || d == filepath.Dir(d) || !strings.HasPrefix(d, s.ws.Dir) {
			return "", "", false
		}
	}
}

// outOfBounds says which block's replacement adds a line out of the bounds
// every added line is held to (pkg/linebound), "" when none does: such text
// reaches no parser, check or index.
func outOfBounds(blocks []Block) string {
	for i, b := range blocks {
		var d linebound.Depth
		for n, line := range strings.Split(b.Replace, "\n") {
			if why := d.Line(line); why != "" {
				return fmt.Sprintf("block %d adds %s (its line %d)", i+1, why, n+1)
			}
		}
	}
	return ""
}
