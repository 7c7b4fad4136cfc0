package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
)

// history is a tiny module's history, oldest first: each archive's comment
// is the commit message, its files are written over the previous state (a
// file whose content is "DELETE\n" is removed).
var history = []string{
	`start
-- go.mod --
module example.com/calc

go 1.21
-- calc.go --
package calc

// Add returns a plus b.
func Add(a, b int) int { return a - b }

// Mul returns a times b.
func Mul(a, b int) int { return a * b }
-- calc_test.go --
package calc

import "testing"

func TestMul(t *testing.T) {
	if Mul(2, 3) != 6 {
		t.Fatal("Mul(2, 3) != 6")
	}
}
`,
	`Fix Add: it subtracted
-- calc.go --
package calc

// Add returns a plus b.
func Add(a, b int) int { return a + b }

// Mul returns a times b.
func Mul(a, b int) int { return a * b }
-- add_test.go --
package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}
`,
	`Document Mul (code only)
-- calc.go --
package calc

// Add returns a plus b.
func Add(a, b int) int { return a + b }

// Mul returns a times b, for any ints.
func Mul(a, b int) int { return a * b }
`,
	`More tests (tests only)
-- more_test.go --
package calc

import "testing"

func TestAddZero(t *testing.T) {
	if Add(0, 0) != 0 {
		t.Fatal("Add(0, 0) != 0")
	}
}
`,
	`Half (code only)
-- half.go --
package calc

// Half is n halved, rounded up.
func Half(n int) int { return n / 2 }
`,
	`Fix Half's rounding (its test fails only every other run without it)
-- half.go --
package calc

// Half is n halved, rounded up.
func Half(n int) int { return (n + 1) / 2 }
-- half_test.go --
package calc

import (
	"os"
	"strconv"
	"testing"
)

// TestHalf checks only on odd runs: a stand-in for a test that depends on
// timing. It counts its runs in a file that outlives the test process.
func TestHalf(t *testing.T) {
	b, _ := os.ReadFile("half.runs")
	n, _ := strconv.Atoi(string(b))
	n++
	if err := os.WriteFile("half.runs", []byte(strconv.Itoa(n)), 0o644); err != nil {
		t.Fatal(err)
	}
	if n%2 == 1 && Half(3) != 2 {
		t.Fatalf("Half(3) = %d, want 2", Half(3))
	}
}
`,
	`Sub, half written (does not build)
-- sub.go --
package calc

// Sub returns a minus b.
func Sub(a, b int) int { return a - b + undefinedThing }
-- sub_test.go --
package calc

import "testing"

func TestSub(t *testing.T) {
	if Sub(3, 2) != 1 {
		t.Fatal("Sub(3, 2) != 1")
	}
}
`,
	`Mul: handle negative numbers by a loop (fix too large at a limit of 4 lines)
-- calc.go --
package calc

// Add returns a plus b.
func Add(a, b int) int { return a + b }

// Mul returns a times b, for any ints.
func Mul(a, b int) int {
	neg := b < 0
	if neg {
		b = -b
	}
	r := 0
	for i := 0; i < b; i++ {
		r += a
	}
	if neg {
		return -r
	}
	return r
}
-- sub.go --
package calc

// Sub returns a minus b.
func Sub(a, b int) int { return a - b }
-- mul_test.go --
package calc

import "testing"

func TestMulNeg(t *testing.T) {
	if Mul(2, -3) != -6 {
		t.Fatal("Mul(2, -3) != -6")
	}
}
`,
	`Sub: a comment, and a test that passed before too
-- sub.go --
package calc

// Sub returns a minus b; Sub(a, a) is 0.
func Sub(a, b int) int { return a - b }
-- sub_test.go --
package calc

import "testing"

func TestSub(t *testing.T) {
	if Sub(3, 2) != 1 {
		t.Fatal("Sub(3, 2) != 1")
	}
}

func TestSubZero(t *testing.T) {
	if Sub(0, 0) != 0 {
		t.Fatal("Sub(0, 0) != 0")
	}
}
`,
	`Add Neg (its test needs the new function)
-- neg.go --
package calc

// Neg returns -a.
func Neg(a int) int { return -a }
-- neg_test.go --
package calc

import "testing"

func TestNeg(t *testing.T) {
	if Neg(2) != -2 {
		t.Fatal("Neg(2) != -2")
	}
}
`,
	`Fetch: a test that dials out
-- fetch.go --
package calc

// Port is the service's port.
const Port = "1"
-- fetch_test.go --
package calc

import (
	"net"
	"testing"
)

func TestFetch(t *testing.T) {
	c, err := net.Dial("tcp", "127.0.0.1:"+Port)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}
`,
}

// buildHistory commits history into a new repository and returns its
// directory and the commits, oldest first.
func buildHistory(t *testing.T, ctx context.Context, steps []string) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "calc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var shas []string
	for _, s := range steps {
		ar := txtar.Parse([]byte(s))
		for _, f := range ar.Files {
			p := filepath.Join(dir, filepath.FromSlash(f.Name))
			if string(f.Data) == "DELETE\n" {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sha, err := r.CommitAll(ctx, strings.TrimSpace(string(ar.Comment)))
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, sha)
	}
	return dir, shas
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestMineQualifiesFixesAndSaysWhyItSkipsTheRest(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir, shas := buildHistory(t, ctx, history)
	out := filepath.Join(t.TempDir(), "tasks.jsonl")
	var progress bytes.Buffer
	o := MineOptions{Repo: dir, Out: out, MaxLines: 6, FlakeError: steadyError, Languages: lang.New(golang.Driver{Tests: golang.Runner{Timeout: 5 * time.Minute}}), Progress: NewProgress(&progress, "commits")}
	sum, err := Mine(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("progress:\n%s", progress.String())

	want := map[int]string{ // commit index → verdict
		0: SkipRoot, 1: "qualified", 2: SkipCodeOnly, 3: SkipTestOnly,
		4: SkipCodeOnly, 5: SkipFlaky, 6: SkipBuild, 7: SkipTooLarge, 8: SkipPassOld,
		9: SkipTestsBuild, 10: SkipNetwork,
	}
	verdicts := map[string]Verdict{}
	if err := readLines(StatePath(out), func(b []byte) error {
		var v Verdict
		err := json.Unmarshal(b, &v)
		verdicts[v.Commit] = v
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		v, ok := verdicts[shas[i]]
		if !ok {
			t.Errorf("commit %d (%s) has no verdict", i, strings.SplitN(history[i], "\n", 2)[0])
			continue
		}
		got := v.Skip
		if v.Qualified {
			got = "qualified"
		}
		if got != w {
			t.Errorf("commit %d %q: %s (%s), want %s", i, v.Subject, got, v.Reason, w)
		}
		if !v.Qualified && !strings.Contains(progress.String(), v.Reason) {
			t.Errorf("commit %d: the reason %q was not printed", i, v.Reason)
		}
	}
	// The flaky test is named with its runs.
	if v := verdicts[shas[5]]; !strings.Contains(v.Reason, "without the fix example.com/calc.TestHalf failed 2 of 3 runs") {
		t.Errorf("flaky reason: %q", v.Reason)
	}

	tasks, err := ReadTasksFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Fatalf("tasks: %+v", tasks)
	}
	tk := tasks[0]
	if tk.Fix != shas[1] || tk.Base != shas[0] || tk.Subject != "Fix Add: it subtracted" {
		t.Errorf("task commits: %+v", tk)
	}
	if strings.Join(tk.Tests, ",") != "example.com/calc.TestAdd" || strings.Join(tk.Packages, ",") != "example.com/calc" {
		t.Errorf("task tests %v packages %v", tk.Tests, tk.Packages)
	}
	if !strings.Contains(tk.TestPatch, "+++ b/add_test.go") || strings.Contains(tk.TestPatch, "calc.go") {
		t.Errorf("test patch:\n%s", tk.TestPatch)
	}
	if !strings.Contains(tk.Golden, "+func Add(a, b int) int { return a + b }") || strings.Contains(tk.Golden, "_test.go") {
		t.Errorf("golden patch:\n%s", tk.Golden)
	}
	if tk.LinesChanged != 2 || len(tk.KnownFailures) != 0 {
		t.Errorf("lines changed %d, known failures %v", tk.LinesChanged, tk.KnownFailures)
	}
	if sum.Commits != len(history) || sum.Qualified != 1 || sum.Examined != 6 || sum.Resumed != 0 {
		t.Errorf("summary: %+v", sum)
	}

	// A second run has nothing left to do and writes nothing twice.
	sum2, err := Mine(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Resumed != len(history) || sum2.Qualified != 1 || sum2.Examined != 6 {
		t.Errorf("second run: %+v", sum2)
	}
	if again, _ := ReadTasksFile(out); len(again) != 1 {
		t.Errorf("tasks after the second run: %d", len(again))
	}
}

func TestMineResumesWithinItsBoundAndStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir, shas := buildHistory(t, ctx, history[:4])
	out := filepath.Join(t.TempDir(), "tasks.jsonl")

	// Cancelled as the first test run starts: the mine stops, and the
	// commit in flight gets no verdict.
	cancelled, cancel := context.WithCancel(ctx)
	_, err := Mine(cancelled, MineOptions{Repo: dir, Out: out, Languages: lang.New(golang.Driver{}), Progress: cancelOnStep{cancel}})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("cancelled mine: %v", err)
	}
	if state, _ := os.ReadFile(StatePath(out)); strings.Contains(string(state), shas[1]) {
		t.Fatalf("the commit in flight was decided:\n%s", state)
	}

	// An interruption between the task and its verdict: the task is kept,
	// and the commit is not examined again.
	o := MineOptions{Repo: dir, Out: out, Max: 1, FlakeError: steadyError, Languages: lang.New(golang.Driver{Tests: golang.Runner{Timeout: 5 * time.Minute}})}
	sum, err := Mine(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Examined != 1 || sum.Qualified != 1 {
		t.Fatalf("bounded run: %+v", sum)
	}
	// Newest first: the test-only and code-only commits were decided on
	// the way to the fix, the root commit not yet.
	state, _ := os.ReadFile(StatePath(out))
	if strings.Contains(string(state), shas[0]) || !strings.Contains(string(state), shas[1]) {
		t.Fatalf("state after a bounded run:\n%s", state)
	}
	if err := os.WriteFile(StatePath(out), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o.Max = 0
	sum, err = Mine(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed != 1 || sum.Qualified != 1 || sum.Examined != 1 {
		t.Fatalf("resumed run: %+v", sum)
	}
	if tasks, _ := ReadTasksFile(out); len(tasks) != 1 {
		t.Fatalf("tasks: %+v", tasks)
	}
}

// cancelOnStep cancels a context when the first test run starts.
type cancelOnStep struct{ cancel context.CancelFunc }

func (c cancelOnStep) Total(int)         {}
func (c cancelOnStep) Step(string)       { c.cancel() }
func (c cancelOnStep) Done(string, bool) {}

// A merge is read against its first parent, named by its body's first line
// (the change) before its subject (the branch); its second parent's own
// commits are not on the first-parent line.
func TestFirstParentLogReadsMerges(t *testing.T) {
	ctx := testCtx(t)
	dir, _ := buildHistory(t, ctx, history[:1])
	r := gitrepo.Repo{Dir: dir}
	for _, args := range [][]string{
		{"checkout", "-q", "-b", "topic"},
	} {
		if _, err := r.Git(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "calc.go"), []byte(fixedCalc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitAll(ctx, "on the branch"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"checkout", "-q", "main"},
		{"merge", "-q", "--no-ff", "-m", "Merge pull request #7 from someone/topic", "-m", "Fix Add: it subtracted\n\nMore words.", "topic"},
	} {
		if _, err := r.Git(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := firstParentLog(ctx, r, "HEAD", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 {
		t.Fatalf("commits: %+v", cs)
	}
	m := cs[0]
	if m.subject != "Fix Add: it subtracted (Merge pull request #7 from someone/topic)" || len(m.files) != 1 || m.files[0].path != "calc.go" || m.files[0].added != 1 || m.files[0].removed != 1 {
		t.Errorf("merge: %+v", m)
	}
	if cs[1].parent != "" || cs[1].subject != "start" || len(cs[1].files) != 3 {
		t.Errorf("root: %+v", cs[1])
	}
}

// Mine and the replay need a language driver: without one, no test is run
// as any language's, and the error says there is no driver.
func TestMineAndReplayWithoutLanguages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, shas := buildHistory(t, ctx, history[:2])
	_, err := Mine(ctx, MineOptions{Repo: dir, Out: filepath.Join(t.TempDir(), "tasks.jsonl")})
	if !errors.Is(err, lang.ErrNoDriver) {
		t.Errorf("mine without Languages: %v, want lang.ErrNoDriver", err)
	}
	r := &Runner{Repairer: &scripted{steps: []scriptedStep{{}}}, Policy: "scripted", Results: filepath.Join(t.TempDir(), "r.jsonl")}
	res, err := r.Run(ctx, []Task{{ID: "no-driver", Repo: dir, Base: shas[0], Tests: []string{"TestAdd"}}})
	if err == nil && (len(res) != 1 || !strings.Contains(res[0].Error, "no language driver")) {
		t.Errorf("replay without Languages: %+v", res)
	} else if err != nil && !errors.Is(err, lang.ErrNoDriver) {
		t.Errorf("replay without Languages: %v, want lang.ErrNoDriver", err)
	}
}
