package bench

import (
	"path/filepath"
	"strings"
	"testing"
)

var panicHistory = []string{
	`start
-- go.mod --
module example.com/list

go 1.21
-- list.go --
package list

// First is the first element of xs.
func First(xs []int) int { return xs[len(xs)] }

// Last is the last element of xs.
func Last(xs []int) int { return xs[0] }
-- greet.go --
package list

import "fmt"

// Greet prints a greeting.
func Greet(name string) { fmt.Println("hello" + name) }
`,
	`Fix First and Last (First's test panics without the fix, stopping Last's)
-- list.go --
package list

// First is the first element of xs.
func First(xs []int) int { return xs[0] }

// Last is the last element of xs.
func Last(xs []int) int { return xs[len(xs)-1] }
-- list_test.go --
package list

import "testing"

func TestFirst(t *testing.T) {
	if First([]int{1, 2}) != 1 {
		t.Fatal("First([1 2]) != 1")
	}
}

func TestLast(t *testing.T) {
	if Last([]int{1, 2}) != 2 {
		t.Fatal("Last([1 2]) != 2")
	}
}
`,
	`Fix Greet's missing space (an example checks it)
-- greet.go --
package list

import "fmt"

// Greet prints a greeting.
func Greet(name string) { fmt.Println("hello " + name) }
-- greet_test.go --
package list

func ExampleGreet() {
	Greet("you")
	// Output: hello you
}

// ExampleGreet_quiet has no output comment: go test only compiles it.
func ExampleGreet_quiet() {
	Greet("")
}
`,
}

// A test that another test's panic stopped is run on its own, so that the
// task keeps both tests of a fix (and neither is called flaky); an example
// whose output the fix corrects is a test, one without an output comment
// is not.
func TestMineTellsAPanicFromAFlakeAndMinesExamples(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir, shas := buildHistory(t, ctx, panicHistory)
	out := filepath.Join(t.TempDir(), "tasks.jsonl")
	sum, err := Mine(ctx, cheapRuns(dir, out))
	if err != nil {
		t.Fatal(err)
	}
	vs := verdicts(t, out)
	if v := vs[shas[1]]; !v.Qualified || strings.Join(v.Tests, ",") != "example.com/list.TestFirst,example.com/list.TestLast" {
		t.Errorf("the fix whose first test panics: %+v", v)
	}
	if v := vs[shas[2]]; !v.Qualified || strings.Join(v.Tests, ",") != "example.com/list.ExampleGreet" {
		t.Errorf("the fix checked by an example: %+v", v)
	}
	if sum.Qualified != 2 || sum.Skipped[SkipFlaky] != 0 || sum.Kinds[KindFix] != 2 {
		t.Errorf("summary: %+v", sum)
	}
}
