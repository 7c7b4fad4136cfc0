package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/workspace"
)

// score decides, independently of the bot's gates, whether patch solves the
// task: it changes no test file, applies on a clean copy of the task's
// commit, the failing tests pass there, and the packages' other tests do
// too (but for the task's known failures). The reason says why not.
func (r *Runner) score(ctx context.Context, p prepared, t Task, patch string) (bool, string, error) {
	files, err := patchFiles(patch)
	if err != nil {
		return false, "the patch does not parse: " + err.Error(), nil
	}
	for _, f := range files {
		if p.lang.IsTestFile(f) {
			return false, "the patch changes a test file: " + f, nil
		}
	}
	ws, err := workspace.Open(ctx, p.repo, p.commit, filepath.Join(p.dir, "score"))
	if err != nil {
		return false, "", err
	}
	defer ws.Close()
	pf := filepath.Join(p.dir, "candidate.diff")
	if err := os.WriteFile(pf, []byte(patch), 0o644); err != nil {
		return false, "", err
	}
	if err := ws.Repo.Apply(ctx, pf); err != nil {
		return false, "the patch does not apply on a clean copy: " + firstLine(err.Error()), nil
	}
	ctx = sandbox.WithRepo(ctx, p.repo)
	oracle, err := p.lang.Run(ctx, ws.Dir, t.Tests, 1)
	if err != nil {
		return false, "", err
	}
	if !oracle.OK() {
		return false, "the failing tests do not pass: " + oracle.Summary() + describe(oracle.Failed, oracle.Build), nil
	}
	all, err := p.lang.RunPackages(ctx, ws.Dir, p.pkgs)
	if err != nil {
		return false, "", err
	}
	if len(all.Build) > 0 {
		return false, "the packages do not build: " + describe(nil, all.Build), nil
	}
	var broken []task.Failure
	for _, f := range all.Failed {
		if !knownFailure(f.ID(), t.KnownFailures) {
			broken = append(broken, f)
		}
	}
	if len(broken) > 0 {
		return false, fmt.Sprintf("%d other tests of the packages fail:%s", len(broken), describe(broken, nil)), nil
	}
	if all.TimedOut {
		return false, "the packages' tests timed out", nil
	}
	return true, "", nil
}

// knownFailure reports whether id, or the test it is a subtest, a
// parameter or a member of, is known to fail with the right fix too.
func knownFailure(id string, known []string) bool {
	for _, k := range known {
		if under(id, k) {
			return true
		}
	}
	return false
}

func describe(failed, build []task.Failure) string {
	var b strings.Builder
	for i, f := range append(append([]task.Failure(nil), failed...), build...) {
		if i == 3 {
			b.WriteString(" …")
			break
		}
		fmt.Fprintf(&b, " %s: %s;", f.ID(), firstLine(f.Message, f.Output))
	}
	return strings.TrimSuffix(b.String(), ";")
}

// patchFiles lists the files a unified diff touches.
func patchFiles(patch string) ([]string, error) {
	fs, err := unidiff.Parse(patch)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range fs {
		for _, p := range f.Paths() {
			if p != "" && p != "/dev/null" && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func nonTestFiles(l Language, files []string) []string {
	var out []string
	for _, f := range files {
		if !l.IsTestFile(f) {
			out = append(out, f)
		}
	}
	return out
}

// compareGolden says whether patch makes the same change as the golden
// fix: the same lines removed and added in the same files, whitespace
// aside.
func compareGolden(patch, golden string) string {
	switch {
	case strings.TrimSpace(patch) == "":
		return "no-patch"
	case strings.TrimSpace(golden) == "":
		return "no-golden"
	}
	a, errA := changeSet(patch)
	b, errB := changeSet(golden)
	if errA == nil && errB == nil && a == b {
		return "same"
	}
	return "differs"
}

// changeSet is a diff's changed lines without whitespace, file by file, in
// a canonical order.
func changeSet(patch string) (string, error) {
	fs, err := unidiff.Parse(patch)
	if err != nil {
		return "", err
	}
	var files []string
	for _, f := range fs {
		var lines []string
		for _, l := range f.Changes() {
			lines = append(lines, string(l.Kind)+strings.Join(strings.Fields(l.Text), ""))
		}
		files = append(files, f.Path()+"\n"+strings.Join(lines, "\n"))
	}
	sort.Strings(files)
	return strings.Join(files, "\n\n"), nil
}
