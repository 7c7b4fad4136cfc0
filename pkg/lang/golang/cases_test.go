package golang

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/testrun"
)

// repo writes files into a new git repository (one commit) and returns its
// directory.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, files)
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "start"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return c
}

const goMod = "module example.com/m\n\ngo 1.22\n"

// A subtest whose outcome depends on the siblings run before it: run
// alone it passes; in CI, inside its parent, it fails. It is run inside its
// parent, and its outcome is read from that run.
func TestSubtestRunsInsideItsParent(t *testing.T) {
	dir := repo(t, map[string]string{
		"go.mod": goMod,
		"flags/flags.go": `package flags

var args []string

// Add records an argument.
func Add(a string) { args = append(args, a) }

// Args are the arguments recorded so far.
func Args() []string { return args }
`,
		"flags/flags_test.go": `package flags

import "testing"

func TestParse(t *testing.T) {
	t.Run("one", func(t *testing.T) { Add("baz") })
	t.Run("empty", func(t *testing.T) {
		if got := Args(); len(got) != 0 {
			t.Fatalf("expected args [], got %v", got)
		}
	})
}
`,
	})
	o, err := Runner{}.Run(ctx(t), dir, []string{"TestParse/empty"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Failed) != 1 || o.Failed[0].ID() != "example.com/m/flags.TestParse/empty" {
		t.Fatalf("failed = %+v; want exactly TestParse/empty (%s)", o.Failed, o.Summary())
	}
	if got := o.Failed[0].Message; got != "expected args [], got [baz]" {
		t.Errorf("message = %q, want the failure CI saw", got)
	}
	if len(o.Passed) != 0 || len(o.Others) != 0 || len(o.Missing) != 0 {
		t.Errorf("only the asked subtest is reported: passed %v, others %v, missing %v", o.Passed, o.Others, o.Missing)
	}
}

// Two tests of one package, and a third of another: two go test
// processes, not three.
func TestOneProcessPerPackage(t *testing.T) {
	dir := repo(t, map[string]string{
		"go.mod":      goMod,
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) { t.Run(\"x\", func(t *testing.T) { t.Error(\"x broke\") }) }\n\nfunc TestB(t *testing.T) { t.Error(\"b broke\") }\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) {}\n",
	})
	o, err := Runner{}.Run(ctx(t), dir, []string{"TestA/x", "TestB", "TestC"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if o.Invocations != 2 {
		t.Errorf("invocations = %d, want 2 (one per package)", o.Invocations)
	}
	var failed []string
	for _, f := range o.Failed {
		failed = append(failed, f.ID())
	}
	slices.Sort(failed)
	if want := []string{"example.com/m/a.TestA/x", "example.com/m/a.TestB"}; !slices.Equal(failed, want) {
		t.Errorf("failed = %v, want %v", failed, want)
	}
	if !slices.Equal(o.Passed, []string{"example.com/m/b.TestC"}) {
		t.Errorf("passed = %v", o.Passed)
	}
}

// A panic in a subtest of a table while 66 parallel subtests wait paused:
// the panic (its message and frames, relative to the repository) is the
// failure; the paused subtests never ran and are not failures; the parent
// is counted once, and not as passed.
func TestPanicInSubtestWithPausedSiblings(t *testing.T) {
	dir := repo(t, map[string]string{
		"go.mod": goMod,
		"tbl/tbl.go": `package tbl

// Lookup reads a key from a table that may be nil.
func Lookup(m map[string]int, k string) int {
	m[k]++
	return m[k]
}
`,
		"tbl/tbl_test.go": `package tbl

import (
	"fmt"
	"testing"
)

func TestTable(t *testing.T) {
	for i := 0; i < 66; i++ {
		t.Run(fmt.Sprintf("par%02d", i), func(t *testing.T) { t.Parallel() })
	}
	for i := 0; i < 8; i++ {
		t.Run(fmt.Sprintf("#%02d", i), func(t *testing.T) {
			var m map[string]int
			if i != 5 {
				m = map[string]int{}
			}
			Lookup(m, "k")
		})
	}
}
`,
	})
	for _, run := range []func() (testrun.Outcome, error){
		func() (testrun.Outcome, error) { return Runner{}.Run(ctx(t), dir, []string{"TestTable"}, 1) },
		func() (testrun.Outcome, error) { return Runner{}.RunPackages(ctx(t), dir, []string{"./..."}) },
	} {
		o, err := run()
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Failed) != 1 || o.Failed[0].Test != "TestTable/#05" {
			t.Fatalf("failed = %+v; want TestTable/#05 alone (%s)", o.Failed, o.Summary())
		}
		f := o.Failed[0]
		if !strings.HasPrefix(f.Message, "panic: assignment to entry in nil map") {
			t.Errorf("message = %q, want the panic", f.Message)
		}
		if len(f.Frames) == 0 || f.Frames[0] != "tbl/tbl.go:5" {
			t.Errorf("frames = %v, want tbl/tbl.go:5 first", f.Frames)
		}
		if strings.Contains(f.Output, dir) || strings.Contains(strings.Join(f.Frames, " "), dir) {
			t.Errorf("the checkout's path leaks into the failure:\n%s", f.Output)
		}
		if len(o.NotRun) != 66 {
			t.Errorf("not run = %d tests, want the 66 paused ones", len(o.NotRun))
		}
		if len(o.Passed) != 5 || slices.Contains(o.Passed, "example.com/m/tbl.TestTable") {
			t.Errorf("passed = %v; want #00..#04", o.Passed)
		}
		if !strings.HasPrefix(o.Summary(), "5 passed, 1 failed") {
			t.Errorf("summary = %q", o.Summary())
		}
	}
}

// A test that logs before its failing assertion is summarized by the
// assertion; the logged lines stay in its output.
func TestFailureMessageIsTheAssertion(t *testing.T) {
	dir := repo(t, map[string]string{
		"go.mod":    goMod,
		"calc/c.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
		"calc/c_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	t.Logf("adding %d and %d", 1, 2)
	t.Log("with the default options")
	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %d, want 3", got)
	}
}
`,
	})
	o, err := Runner{}.Run(ctx(t), dir, []string{"TestAdd"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Failed) != 1 {
		t.Fatalf("failed = %+v", o.Failed)
	}
	f := o.Failed[0]
	if f.Message != "Add(1, 2) = -1, want 3" {
		t.Errorf("message = %q, want the assertion", f.Message)
	}
	if len(f.Frames) == 0 || f.Frames[0] != "calc/c_test.go:9" {
		t.Errorf("frames = %v, want calc/c_test.go:9 first", f.Frames)
	}
	if !strings.Contains(f.Output, "adding 1 and 2") {
		t.Errorf("the logged lines are kept in the output:\n%s", f.Output)
	}
}

// More than 256 KiB of output, with the real failure at the end: read
// whole, every test counted, no phantom failure, the same result each run.
func TestLargeOutputIsReadWhole(t *testing.T) {
	dir := repo(t, map[string]string{
		"go.mod": goMod,
		"big/big_test.go": `package big

import (
	"fmt"
	"strings"
	"testing"
)

func TestChatty(t *testing.T) {
	for i := 0; i < 600; i++ {
		t.Run(fmt.Sprintf("case%03d", i), func(t *testing.T) {
			t.Log(strings.Repeat("x", 700))
		})
	}
}

func TestZLast(t *testing.T) {
	t.Fatalf("the real failure: %s", "at the end")
}
`,
	})
	var first string
	for i := 0; i < 2; i++ {
		o, err := Runner{}.RunPackages(ctx(t), dir, []string{"./..."})
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Failed) != 1 || o.Failed[0].Test != "TestZLast" || o.Failed[0].Message != "the real failure: at the end" {
			t.Fatalf("failed = %+v (%s)", o.Failed, o.Summary())
		}
		if len(o.Passed) != 601 || len(o.NotRun) != 0 || len(o.Incomplete) != 0 {
			t.Fatalf("passed %d, not run %d, incomplete %v; want 601, 0, none", len(o.Passed), len(o.NotRun), o.Incomplete)
		}
		if i == 0 {
			first = o.Summary()
		} else if o.Summary() != first {
			t.Fatalf("the result changed between runs: %q then %q", first, o.Summary())
		}
	}
}

// A test with 100 subtests, 2 of which fail: exactly those 2 fail, the 98
// others pass, and the parent is neither passed nor repeated.
func TestHundredSubtestsTwoFail(t *testing.T) {
	dir := repo(t, map[string]string{
		"go.mod": goMod,
		"many/many_test.go": `package many

import (
	"fmt"
	"testing"
)

func TestMany(t *testing.T) {
	for i := 0; i < 100; i++ {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if i == 17 || i == 63 {
				t.Errorf("case %d is wrong", i)
			}
		})
	}
}
`,
	})
	o, err := Runner{}.Run(ctx(t), dir, []string{"TestMany"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range o.Failed {
		failed = append(failed, f.Test)
	}
	if !slices.Equal(failed, []string{"TestMany/17", "TestMany/63"}) {
		t.Fatalf("failed = %v", failed)
	}
	if len(o.Passed) != 98 || slices.Contains(o.Passed, "example.com/m/many.TestMany") {
		t.Fatalf("passed = %d tests (parent included: %v)", len(o.Passed), slices.Contains(o.Passed, "example.com/m/many.TestMany"))
	}
	if got := o.Summary(); got != "98 passed, 2 failed" {
		t.Errorf("summary = %q", got)
	}
	// The two failing subtests together: one process, the same two.
	o, err = Runner{}.Run(ctx(t), dir, []string{"TestMany/17", "TestMany/63"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if o.Invocations != 1 || len(o.Failed) != 2 || len(o.Passed) != 0 || o.Runs["example.com/m/many.TestMany/63"].Fail != 3 {
		t.Errorf("re-run of the two: %d processes, %s, runs %+v", o.Invocations, o.Summary(), o.Runs)
	}
}

// Names that do not exist are reported beside the results of those that do.
func TestUnknownNamesDoNotStopTheRun(t *testing.T) {
	dir := repo(t, map[string]string{
		"go.mod":      goMod,
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestReal(t *testing.T) {}\n",
	})
	o, err := Runner{}.Run(ctx(t), dir, []string{"TestNope", "TestReal"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Passed, []string{"example.com/m/a.TestReal"}) {
		t.Errorf("passed = %v", o.Passed)
	}
	if len(o.Unknown) != 1 || !strings.Contains(o.Unknown[0], "TestNope") || !slices.Equal(o.Missing, []string{"TestNope"}) {
		t.Errorf("unknown = %v, missing = %v", o.Unknown, o.Missing)
	}
	if o.OK() {
		t.Error("an unknown test is not a pass")
	}
}

func TestListTests(t *testing.T) {
	dir := repo(t, map[string]string{
		"go.mod":        goMod,
		"a/a_test.go":   "package a\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {}\n\nfunc TestTwo(t *testing.T) { t.Run(\"sub\", func(t *testing.T) {}) }\n",
		"b/b.go":        "package b\n",
		"b/c/c_test.go": "package c\n\nimport \"testing\"\n\nfunc TestThree(t *testing.T) {}\n",
	})
	got, err := Runner{}.List(ctx(t), dir, []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	want := []testrun.Listed{
		{ImportPath: "example.com/m/a", Tests: []string{"TestOne", "TestTwo"}},
		{ImportPath: "example.com/m/b"},
		{ImportPath: "example.com/m/b/c", Tests: []string{"TestThree"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List = %+v, want %+v", got, want)
	}
}

// Spectrum-based localization ranks the line only the failing test runs
// (in a helper of another file, reached through another function) above
// the lines the passing tests run too.
func TestLocalizeRanksTheLinesOnlyFailingTestsRun(t *testing.T) {
	dir := repo(t, map[string]string{
		"go.mod": goMod,
		"billing/invoice.go": `package billing

// Gross is net plus tax.
func Gross(net int, taxed bool) int {
	if !taxed {
		return net
	}
	return net + taxOf(net, 20)
}
`,
		"billing/tax.go": `package billing

// taxOf is rate percent of amount.
func taxOf(amount, rate int) int {
	return amount * rate * 100
}
`,
		"billing/invoice_test.go": `package billing

import "testing"

func TestGrossTaxed(t *testing.T) {
	if got := Gross(1000, true); got != 1200 {
		t.Fatalf("Gross(1000, true) = %d, want 1200", got)
	}
}

func TestGrossUntaxed(t *testing.T) {
	if got := Gross(1000, false); got != 1000 {
		t.Fatalf("Gross(1000, false) = %d", got)
	}
}
`,
	})
	sp, err := Runner{}.Localize(ctx(t), dir, []string{"TestGrossTaxed"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Failing) != 1 || len(sp.Passing) != 1 || len(sp.Suspects) == 0 {
		t.Fatalf("spectra = %+v", sp)
	}
	top := map[string]float64{}
	for _, s := range sp.Suspects {
		top[fmt.Sprintf("%s:%d", s.File, s.Line)] = s.Score
	}
	if top["billing/tax.go:5"] != 1 || top["billing/invoice.go:8"] != 1 {
		t.Errorf("the lines only the failing test runs score 1: %v", top)
	}
	if s := top["billing/invoice.go:5"]; s == 0 || s >= 1 {
		t.Errorf("a line both tests run scores below 1: %v", top)
	}
	if _, ok := top["billing/invoice.go:6"]; ok {
		t.Errorf("a line only the passing test runs is a suspect: %v", top)
	}
	if sp.Suspects[0].Passing != 0 {
		t.Errorf("the first suspect = %+v", sp.Suspects[0])
	}
	// Nothing is left behind in the checkout.
	if out, err := exec.Command("git", "-C", dir, "status", "--porcelain").Output(); err != nil || len(out) != 0 {
		t.Errorf("git status after Localize: %q, %v", out, err)
	}
}
