// Package harnesstest is test support for the agent's loop and its tools: a
// small Go module whose second commit broke it, checked out at that commit,
// with the task triage would make of it.
package harnesstest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// CalcGood is the fixture's first commit: a small module whose Add its
// second commit broke (a - b for a + b).
var CalcGood = map[string]string{
	"go.mod": "module example.com/calc\n\ngo 1.21\n",
	"calc/calc.go": `package calc

// Adder adds to a base.
type Adder struct {
	Base int
}

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a + b
}

// Add adds n to the base.
func (x *Adder) Add(n int) int { return Add(x.Base, n) }

// Sub returns a minus b.
func Sub(a, b int) int {
	return a - b
}
`,
	"calc/calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}

func TestSub(t *testing.T) {
	if got := Sub(5, 3); got != 2 {
		t.Fatalf("Sub(5, 3) = %d, want 2", got)
	}
}
`,
	"strs/strs.go": `package strs

import "strings"

// Shout upper-cases s; Add is not here.
func Shout(s string) string { return strings.ToUpper(s) + "!" }
`,
	"README.md": "# calc\n\nAdd and Sub.\n",
}

// Fixture is a workspace at the broken commit and the task describing it.
type Fixture struct {
	WS   *workspace.Workspace
	Task task.Task
	Good string // the commit before the break
	Bad  string // the commit that broke it, checked out in WS
}

// WriteFiles writes files (by their slash-separated paths) under dir.
func WriteFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Calc is the fixture: CalcGood committed, then Add broken and committed,
// checked out at the broken commit, with its task (TestAdd fails).
func Calc(t *testing.T) Fixture {
	t.Helper()
	ctx := context.Background()
	src := t.TempDir()
	repo, err := gitrepo.Init(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	WriteFiles(t, src, CalcGood)
	good, err := repo.CommitAll(ctx, "calc: add and sub")
	if err != nil {
		t.Fatal(err)
	}
	WriteFiles(t, src, map[string]string{"calc/calc.go": ReplaceOnce(t, CalcGood["calc/calc.go"], "return a + b", "return a - b")})
	bad, err := repo.CommitAll(ctx, "calc: simplify Add\n\nShare the code of Sub.")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(ctx, src, bad, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	tk := task.Task{
		ID:   "task-1",
		Repo: src, Commit: bad,
		Failures: []task.Failure{{
			Package: "example.com/calc/calc", Test: "TestAdd",
			Message: "calc_test.go:7: Add(2, 3) = -1, want 5",
			Output:  "=== RUN   TestAdd\n    calc_test.go:7: Add(2, 3) = -1, want 5\n--- FAIL: TestAdd (0.00s)\n",
			Frames:  []string{"calc/calc_test.go:7"},
		}},
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
		Bisection: task.Bisection{Good: good, Bad: bad, Blame: bad, Subject: "calc: simplify Add", Author: "redfix", Steps: 1},
	}
	return Fixture{WS: ws, Task: tk, Good: good, Bad: bad}
}

// ReplaceOnce replaces the first old in s by new; the test fails when s has
// no old.
func ReplaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	t.Fatalf("%q not in the fixture", old)
	return ""
}

// Go is the Go driver the fixtures' repositories are worked on with: their
// tests run with a generous timeout.
func Go() golang.Driver { return golang.Driver{Tests: golang.Runner{Timeout: 3 * time.Minute}} }
