package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// newNodeSession is a session on a workspace of nodetest's vitest history at
// the commit that broke PriceTest, its node_modules set up, with the task
// triage would make of it, and a confining context for its commands.
func newNodeSession(t *testing.T) (context.Context, *Session) {
	t.Helper()
	nodetest.Require(t)
	dir, shas := nodetest.History(t, nodetest.Price[:nodetest.PriceBroken+1]...)
	ctx, cancel := context.WithTimeout(nodetest.Confined(t, dir), 5*time.Minute)
	t.Cleanup(cancel)
	bad := shas[nodetest.PriceBroken]
	ws, err := workspace.Open(ctx, dir, bad, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	d := node.Driver{CacheDir: nodetest.CacheDir(t)}
	if err := d.Setup(ctx, ws.Dir); err != nil {
		t.Fatal(err)
	}
	file, name, _ := strings.Cut(nodetest.PriceTest, "::")
	tk := task.Task{
		ID: "task-node", Repo: dir, Commit: bad,
		Failures:  []task.Failure{{Package: file, Test: name, Message: nodetest.PriceFailure, Frames: []string{nodetest.PriceFrame}}},
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
		Bisection: task.Bisection{Good: shas[nodetest.PriceBroken-1], Bad: bad, Blame: bad, Steps: 1},
	}
	env := testEnv(t)
	env.Lang = d
	s := NewSession(env, ws, tk, All())
	t.Cleanup(s.Close)
	return ctx, s
}

func doIn(ctx context.Context, t *testing.T, s *Session, name string, args any) Observation {
	t.Helper()
	obs, err := s.Execute(ctx, name, raw(args))
	if err != nil {
		t.Fatalf("%s(%+v): %v", name, args, err)
	}
	return obs
}

// The tools on a TypeScript repository, through the Node driver: vitest
// runs the task's test by its canonical id, a test file, a directory, a
// name without its file; the symbols are tree-sitter's; the fix's edit
// makes the task's test pass.
func TestToolsNode(t *testing.T) {
	ctx, s := newNodeSession(t)
	_, passing, _ := strings.Cut(nodetest.PricePassing, "::")

	obs := doIn(ctx, t, s, RunTests, RunTestsArgs{})
	wantContent(t, obs, false, "FAIL: 0 passed, 1 failed (the task's failing tests)",
		"--- FAIL: "+nodetest.PriceTest, nodetest.PriceFailure)
	if s.oraclePassed {
		t.Error("a failing oracle run counts as passed")
	}
	// A test file is a package: all its tests run (the rounding test's
	// file is another).
	wantContent(t, doIn(ctx, t, s, RunTests, RunTestsArgs{Tests: []string{"src/price.test.ts"}}), false,
		"FAIL: 1 passed, 1 failed (these include the task's failing tests)", nodetest.PricePassing)
	// So is a directory; a name its file alone declares is a test, and so
	// is a canonical id.
	wantContent(t, doIn(ctx, t, s, RunTests, RunTestsArgs{Tests: []string{"src"}}), false, "FAIL: 2 passed, 1 failed")
	wantContent(t, doIn(ctx, t, s, RunTests, RunTestsArgs{Tests: []string{passing}}), false, "PASS: 1 passed, 0 failed")
	wantContent(t, doIn(ctx, t, s, RunTests, RunTestsArgs{Tests: []string{nodetest.PricePassing}}), false, "PASS: 1 passed, 0 failed")

	obs = doIn(ctx, t, s, SearchMethod, SearchMethodArgs{Name: "total"})
	wantContent(t, obs, false, "src/price.ts", "export function total(prices: number[], rate: number): number")

	obs = doIn(ctx, t, s, Edit, EditArgs{Path: "src/price.ts", Blocks: "<<<<<<< SEARCH\n  for (const p of prices.slice(1)) {\n=======\n  for (const p of prices) {\n>>>>>>> REPLACE\n"})
	if obs.IsError || obs.Edit == nil || !obs.Edit.Applied {
		t.Fatalf("the fix's edit: %+v", obs)
	}
	wantContent(t, doIn(ctx, t, s, RunTests, RunTestsArgs{}), false, "PASS: 1 passed, 0 failed (the task's failing tests)")
	if !s.oraclePassed {
		t.Error("the oracle passed and the session does not know it")
	}
}

// The policy is told how a JavaScript or TypeScript repository's tests are
// named.
func TestSpecsForNodeSpeakOfJavaScript(t *testing.T) {
	specs := Specs(All(), node.Driver{})
	for i, sp := range Specs(All(), nil) {
		d := specs[i].Description
		switch sp.Name {
		case RunTests:
			if !strings.Contains(d, "FILE::NAME") || !strings.Contains(d, "vitest") || strings.Contains(d, "pytest") || strings.Contains(d, "import/path") {
				t.Errorf("node's run_tests: %q", d)
			}
		case SearchClass, SearchMethod, SearchMethodInFile, SearchMethodInClass:
			if !strings.Contains(d, "TypeScript") || strings.Contains(d, "Go ") {
				t.Errorf("node's %s: %q", sp.Name, d)
			}
		}
	}
}

// run_tests takes a JavaScript test file or directory for a package, as
// the driver resolves it in the checkout, and a test's id, full name or
// title for a test.
func TestIsPackageNode(t *testing.T) {
	_, s := newNodeSession(t)
	for a, want := range map[string]bool{
		"src/price.test.ts": true, "src/": true, "src": true,
		"src/price.test.ts::price > applies the discount": false,
		"price > applies the discount":                    false,
		"applies the discount":                            false,
	} {
		if got := s.isPackage(a); got != want {
			t.Errorf("isPackage(%q) = %v, want %v", a, got, want)
		}
	}
}

// The policy is told how a JavaScript repository's tests are named, and
// what an edit's feedback is; Go's descriptions stay as they are.
func TestSpecsForNode(t *testing.T) {
	log := zaptest.NewLogger(t)
	js := Specs(All(), node.Driver{})
	for i, sp := range Specs(All(), nil) {
		d := js[i].Description
		switch sp.Name {
		case RunTests:
			if !strings.Contains(d, `"src/price.test.ts::price > applies the discount"`) || strings.Contains(d, "import/path") {
				t.Errorf("JavaScript's run_tests: %q", d)
			}
		case Edit:
			if strings.Contains(d, "gofmt") || !strings.Contains(d, "static checks") {
				t.Errorf("JavaScript's edit: %q", d)
			}
		case SearchMethod:
			if !strings.Contains(d, "arrow functions") {
				t.Errorf("JavaScript's search_method: %q", d)
			}
		}
		for _, goWord := range []string{"gofmt", "go vet", "import path", "Go "} {
			if strings.Contains(d, goWord) && d != sp.Description {
				t.Errorf("JavaScript's %s speaks of Go: %q", sp.Name, d)
			}
		}
	}
	// An edit's feedback names the checks it ran, as the driver names them.
	s := &Session{env: Env{Lang: node.Driver{}, Log: log}}
	for rel, want := range map[string]string{"README.md": "none for this file", "src/price.ts": node.Driver{}.ChecksName(), "x.go": "none for this file"} {
		if got := s.checksOf(rel); got != want {
			t.Errorf("checksOf(%s) = %q, want %q", rel, got, want)
		}
	}
}
