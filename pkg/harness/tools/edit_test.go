package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness/harnesstest"
	"github.com/redfix/redfix/pkg/workspace"
)

type fakePatcher struct {
	blocks string
	err    error
	got    []string // path, content, instructions
}

func (p *fakePatcher) Blocks(_ context.Context, path, content, instructions string) (string, error) {
	p.got = []string{path, content, instructions}
	return p.blocks, p.err
}

func TestEdit(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(f.WS.Dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	before := read("calc/calc.go")

	// Problems the policy can fix leave the file alone.
	obs := do(t, s, Edit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\n\treturn a - b\n=======\n\treturn a + b\n>>>>>>> REPLACE\n"})
	wantContent(t, obs, true, "was not applied", "block 1 of 1", "matches 2 places (lines 10, 18)")
	if obs.Edit == nil || obs.Edit.Applied {
		t.Errorf("Edit = %+v", obs.Edit)
	}
	obs = do(t, s, Edit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\nfunc Add(a, b int) int {\n\treturn a * b\n}\n=======\nx\n>>>>>>> REPLACE\n"})
	wantContent(t, obs, true, "does not match", "nearest lines", "     9\tfunc Add(a, b int) int {")
	wantCalls(t, s, []call{
		{Edit, EditArgs{Path: "calc/calc.go", Blocks: "return a + b"}, true, []string{"cannot be read", "<<<<<<< SEARCH"}},
		{Edit, EditArgs{Path: "calc/calc.go", Instructions: "fix Add"}, true, []string{"No patcher"}},
		{Edit, EditArgs{Path: "calc/calc.go"}, true, []string{"Give blocks"}},
		{Edit, EditArgs{Path: "../evil.go", Blocks: "<<<<<<< SEARCH\n=======\npackage evil\n>>>>>>> REPLACE\n"}, true, []string{"outside the workspace"}},
		{Edit, EditArgs{Path: ".git/hooks/pre-commit", Blocks: "<<<<<<< SEARCH\n=======\nexit 1\n>>>>>>> REPLACE\n"}, true, []string{"outside the workspace"}},
		{Edit, EditArgs{Path: "calc/nope.go", Blocks: "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"}, true, []string{"does not exist", "empty SEARCH"}},
		// Text no parser should see: refused before it reaches the file,
		// the checks or the index.
		{Edit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\n\treturn a * b\n=======\n\treturn a * b\n\tvar _ = " + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300) + "\n>>>>>>> REPLACE\n"}, true, []string{"was not applied", "nested more than 256 deep"}},
		{Edit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\n\treturn a * b\n=======\n\t// " + strings.Repeat("x", 9000) + "\n\treturn a * b\n>>>>>>> REPLACE\n"}, true, []string{"was not applied", "a line of 9004 bytes"}},
	})
	if _, err := os.Stat(filepath.Join(filepath.Dir(f.WS.Dir), "evil.go")); err == nil {
		t.Fatal("an edit wrote outside the workspace")
	}
	if read("calc/calc.go") != before {
		t.Fatal("a refused edit changed the file")
	}

	// The fix, found by the whitespace-tolerant match.
	obs = do(t, s, Edit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\nfunc Add(a, b int) int {\n    return a - b\n}\n=======\nfunc Add(a, b int) int {\n\treturn a + b\n}\n>>>>>>> REPLACE\n"})
	wantContent(t, obs, false, "Edited calc/calc.go: 1 block applied", "-\treturn a - b", "+\treturn a + b", "clean")
	if obs.Edit == nil || !obs.Edit.Applied || obs.Edit.Diagnostics != "" || !strings.Contains(obs.Edit.Diff, "+\treturn a + b") {
		t.Fatalf("Edit = %+v", obs.Edit)
	}

	// Static analysis after edits: gofmt, build, vet.
	obs = do(t, s, Edit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\n\treturn a - b\n=======\n\treturn   a - b\n>>>>>>> REPLACE\n"})
	if obs.Edit == nil || !strings.Contains(obs.Edit.Diagnostics, "gofmt: calc/calc.go: not gofmt-formatted") {
		t.Fatalf("Edit = %+v", obs.Edit)
	}
	obs = do(t, s, Edit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\n\treturn   a - b\n=======\n\treturn a - c\n>>>>>>> REPLACE\n"})
	if obs.Edit == nil || !strings.Contains(obs.Edit.Diagnostics, "build: calc/calc.go:") || !strings.Contains(obs.Edit.Diagnostics, "undefined: c") {
		t.Fatalf("Edit = %+v", obs.Edit)
	}
	wantContent(t, obs, false, "Static analysis found problems")
	obs = do(t, s, Edit, EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\npackage calc\n=======\npackage calc\n\nimport \"fmt\"\n\nfunc debug() { fmt.Printf(\"%d\\n\", \"s\") }\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n\treturn a - c\n=======\n\treturn a - b\n>>>>>>> REPLACE\n"})
	if obs.Edit == nil || !strings.Contains(obs.Edit.Diagnostics, "vet: calc/calc.go:") || !strings.Contains(obs.Edit.Diagnostics, "Printf") {
		t.Fatalf("Edit = %+v", obs.Edit)
	}

	// A new file, through a patcher.
	p := &fakePatcher{blocks: "calc/mul.go\n```go\n<<<<<<< SEARCH\n=======\npackage calc\n\n// Mul multiplies.\nfunc Mul(a, b int) int { return a * b }\n>>>>>>> REPLACE\n```\n"}
	s.env.Patcher = p
	obs = do(t, s, Edit, EditArgs{Path: "calc/mul.go", Instructions: "add Mul"})
	wantContent(t, obs, false, "Created calc/mul.go", "written by the patcher", "new file mode", "+func Mul(a, b int) int { return a * b }")
	if obs.Edit.Diagnostics == "" || strings.Contains(obs.Edit.Diagnostics, "mul.go") {
		// vet still reports debug's Printf; mul.go itself is clean.
		t.Logf("diagnostics: %s", obs.Edit.Diagnostics)
	}
	if len(p.got) != 3 || p.got[0] != "calc/mul.go" || p.got[1] != "" || p.got[2] != "add Mul" {
		t.Errorf("patcher got %q", p.got)
	}
	p.err = errors.New("model unavailable")
	if _, err := s.Execute(context.Background(), Edit, raw(EditArgs{Path: "calc/mul.go", Instructions: "x"})); err == nil || !strings.Contains(err.Error(), "model unavailable") {
		t.Errorf("a patcher failure is not a Go error: %v", err)
	}
}

// A file with formatting debt: a clean edit reports no finding of its own
// and names the ones that were there, and an edit that formats a line
// badly reports that line alone.
func TestEditFeedbackCountsOnlyNewFindings(t *testing.T) {
	f := harnesstest.Calc(t)
	debt := "package calc\n\n// Scale multiplies.\nfunc Scale(a, k int) int {\nreturn a*k\n}\n\n// Half halves.\nfunc Half(a int) int {\n  return a/2\n}\n"
	src := f.Task.Repo
	harnesstest.WriteFiles(t, src, map[string]string{"calc/debt.go": debt})
	repo := gitrepo.Repo{Dir: src}
	commit, err := repo.CommitAll(context.Background(), "calc: scale and half")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(context.Background(), src, commit, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	f.WS, f.Task.Commit = ws, commit
	s := newTestSession(t, f, nil)

	clean := "<<<<<<< SEARCH\n// Half halves.\n=======\n// Half halves a, rounding\n// toward zero, as integer\n// division does; it is\n// used by the layout code\n// and must stay cheap.\n>>>>>>> REPLACE\n"
	obs := do(t, s, Edit, EditArgs{Path: "calc/debt.go", Blocks: clean})
	// The findings from before are named, not only counted.
	wantContent(t, obs, false, "no new finding", "were there before this edit", "return a*k")
	if obs.Edit == nil || obs.Edit.Diagnostics != "" {
		t.Fatalf("diagnostics of a clean edit = %+v", obs.Edit)
	}

	bad := "<<<<<<< SEARCH\nreturn a*k\n=======\nreturn a*k\n}\n\n// Third thirds.\nfunc Third(a int) int {\nreturn   a/3\n>>>>>>> REPLACE\n"
	obs = do(t, s, Edit, EditArgs{Path: "calc/debt.go", Blocks: bad})
	wantContent(t, obs, false, "Static analysis found problems this edit brought", `gofmt would rewrite "return   a/3"`)
	if strings.Contains(obs.Edit.Diagnostics, "a/2") || strings.Contains(obs.Edit.Diagnostics, "a*k") {
		t.Errorf("old formatting debt is reported as the edit's:\n%s", obs.Edit.Diagnostics)
	}
}

// denyDir refuses the paths under a directory, as a repository's
// .redfix.yaml paths.deny does.
type denyDir string

func (d denyDir) PathAllowed(p string) (bool, string) {
	if strings.HasPrefix(p, string(d)+"/") {
		return false, `.redfix.yaml paths.deny "` + string(d) + `/**"`
	}
	return true, ""
}

func TestEditRefusesAPathTheRepositoryDenies(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)
	before, err := os.ReadFile(filepath.Join(f.WS.Dir, "calc/calc.go"))
	if err != nil {
		t.Fatal(err)
	}
	fix := EditArgs{Path: "calc/calc.go", Blocks: "<<<<<<< SEARCH\nfunc Add(a, b int) int {\n\treturn a - b\n}\n=======\nfunc Add(a, b int) int {\n\treturn a + b\n}\n>>>>>>> REPLACE\n"}
	ctx := WithPaths(context.Background(), denyDir("calc"))
	obs, err := s.Execute(ctx, Edit, raw(fix))
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, obs, true, "calc/calc.go may not be changed", `refused by .redfix.yaml paths.deny "calc/**"`)
	if after, _ := os.ReadFile(filepath.Join(f.WS.Dir, "calc/calc.go")); string(after) != string(before) {
		t.Fatal("a refused edit changed the file")
	}
	// Without the rule the same edit applies.
	obs, err = s.Execute(context.Background(), Edit, raw(fix))
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, obs, false, "Edited calc/calc.go")
}
