package validators

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/task"
)

// TestRevertByPurpose holds the revert gate to the culprits and patches of
// testdata/revert: each archive has the files before the culprit (pre/),
// after it (culprit/) and after the patch (patch/), and a want section: the
// verdict, then words the detail must hold (or, after "!", must not). Restoring fixes must pass,
// reverts must not, however they are worded; and no detail may hand over a
// share of lines to get under.
func TestRevertByPurpose(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("testdata/revert/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no revert cases: %v", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			stages := map[string]map[string]string{}
			var want []string
			for _, f := range ar.Files {
				if f.Name == "want" {
					want = strings.Split(strings.TrimSpace(string(f.Data)), "\n")
					continue
				}
				stage, name, _ := strings.Cut(f.Name, "/")
				if stages[stage] == nil {
					stages[stage] = map[string]string{}
				}
				stages[stage][name] = string(f.Data)
			}
			g := revertOf(t, stages["pre"], stages["culprit"], stages["patch"])
			t.Logf("%s: %s", g.Verdict, g.Detail)
			if verdict := map[string]string{"pass": task.GatePass, "fail": task.GateFail}[want[0]]; g.Verdict != verdict {
				t.Errorf("verdict %s, want %s: %s", g.Verdict, verdict, g.Detail)
			}
			for _, w := range want[1:] {
				if not, ok := strings.CutPrefix(w, "!"); ok {
					if strings.Contains(g.Detail, not) {
						t.Errorf("detail %q mentions %q", g.Detail, not)
					}
					continue
				}
				if !strings.Contains(g.Detail, w) {
					t.Errorf("detail %q does not mention %q", g.Detail, w)
				}
			}
			if strings.Contains(g.Detail, "%") {
				t.Errorf("detail %q gives a share", g.Detail)
			}
		})
	}
}

// revertOf commits pre then culprit in a new repository, writes the patch's
// files on top, and runs the revert gate on that change.
func revertOf(t *testing.T, pre, culprit, patch map[string]string) task.Gate {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, pre)
	if _, err := repo.CommitAll(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	for name := range pre {
		if _, ok := culprit[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(t, dir, culprit)
	base, err := repo.CommitAll(ctx, "the culprit")
	if err != nil {
		t.Fatal(err)
	}
	blame, err := repo.Show(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, patch)
	diff, err := repo.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Dir: dir, Base: base, Patch: diff, BlameDiff: blame.Diff, Lang: sourceDriver(culprit),
		Task: task.Task{ID: "t1", Commit: base, Bisection: task.Bisection{Blame: base, Subject: blame.Subject}}}
	g, err := New(Config{}, nil).revert(ctx, &candidate{in: in, lang: in.Lang, files: mustParse(t, diff)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// sourceDriver is the driver whose source files the culprit changes.
func sourceDriver(files map[string]string) Language {
	for _, d := range []Language{golang.Driver{}, python.Driver{}, node.Driver{}} {
		for name := range files {
			if d.IsSource(name) {
				return d
			}
		}
	}
	return golang.Driver{}
}
