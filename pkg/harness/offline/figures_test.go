package offline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/offline"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/workspace"
)

// noBlameCase is a failure built for the offline policy's figures: a
// module at one commit, with a single-token bug in a file other than the
// failing test's, and no blame commit for the policy to lean on.
type noBlameCase struct {
	name    string
	files   map[string]string
	failing string
}

const figuresMod = "module example.com/acme\n\ngo 1.22\n"

var noBlameCases = []noBlameCase{
	{
		name: "logs-before-fail",
		files: map[string]string{
			"cart/cart.go": "package cart\n\n// Item is a line of a cart.\ntype Item struct {\n\tName  string\n\tPrice int\n\tQty   int\n}\n\n// Total is the cart's price.\nfunc Total(items []Item) int {\n\tt := 0\n\tfor _, it := range items {\n\t\tt -= it.Price * it.Qty\n\t}\n\treturn t\n}\n",
			"cart/cart_test.go": `package cart

import "testing"

func TestTotal(t *testing.T) {
	items := []Item{{"pen", 150, 2}, {"ink", 400, 1}}
	t.Logf("cart has %d items", len(items))
	for _, it := range items {
		t.Logf("item %s: %d x %d", it.Name, it.Qty, it.Price)
	}
	if got := Total(items); got != 700 {
		t.Errorf("Total = %d, want 700", got)
	}
}
`,
		},
		failing: "TestTotal",
	},
	{
		name: "indirect-helper",
		files: map[string]string{
			"billing/invoice.go": "package billing\n\n// Invoice is what a customer owes.\ntype Invoice struct{ Net, Tax, Gross int }\n\n// NewInvoice computes an invoice for a net amount in cents.\nfunc NewInvoice(net int) Invoice {\n\ttax := taxOf(net, 20)\n\treturn Invoice{Net: net, Tax: tax, Gross: net + tax}\n}\n",
			"billing/tax.go":     "package billing\n\n// taxOf is rate percent of amount.\nfunc taxOf(amount, rate int) int {\n\treturn amount * rate * 100\n}\n",
			"billing/invoice_test.go": `package billing

import "testing"

func TestNewInvoice(t *testing.T) {
	if got := NewInvoice(1000); got.Gross != 1200 {
		t.Fatalf("NewInvoice(1000).Gross = %d, want 1200", got.Gross)
	}
}
`,
		},
		failing: "TestNewInvoice",
	},
	{
		name: "subtests-two-of-eight",
		files: map[string]string{
			"grade/grade.go": "package grade\n\n// Letter grades a score out of 100.\nfunc Letter(score int) string {\n\tswitch {\n\tcase score >= 90:\n\t\treturn \"A\"\n\tcase score > 75:\n\t\treturn \"B\"\n\tcase score >= 50:\n\t\treturn \"C\"\n\t}\n\treturn \"F\"\n}\n",
			"grade/grade_test.go": `package grade

import (
	"fmt"
	"testing"
)

func TestLetter(t *testing.T) {
	for _, c := range []struct {
		score int
		want  string
	}{{95, "A"}, {90, "A"}, {80, "B"}, {75, "B"}, {60, "C"}, {50, "C"}, {49, "F"}, {0, "F"}} {
		t.Run(fmt.Sprint(c.score), func(t *testing.T) {
			if got := Letter(c.score); got != c.want {
				t.Errorf("Letter(%d) = %q, want %q", c.score, got, c.want)
			}
		})
	}
}
`,
		},
		failing: "TestLetter/75",
	},
	{
		name: "panic-in-subtest",
		files: map[string]string{
			"queue/queue.go": "package queue\n\n// Last is the newest element.\nfunc Last(xs []string) string {\n\treturn xs[len(xs)]\n}\n",
			"queue/queue_test.go": `package queue

import "testing"

func TestLast(t *testing.T) {
	t.Run("one", func(t *testing.T) {
		if got := Last([]string{"a"}); got != "a" {
			t.Errorf("Last = %q", got)
		}
	})
	t.Run("three", func(t *testing.T) {
		if got := Last([]string{"a", "b", "c"}); got != "c" {
			t.Errorf("Last = %q", got)
		}
	})
}
`,
		},
		failing: "TestLast/one",
	},
	{
		name: "and-or",
		files: map[string]string{
			"access/access.go": "package access\n\n// User is an account.\ntype User struct{ Active, Verified bool }\n\n// CanPost reports whether u may post: active and verified.\nfunc CanPost(u User) bool {\n\treturn u.Active || u.Verified\n}\n",
			"access/access_test.go": `package access

import "testing"

func TestCanPost(t *testing.T) {
	if CanPost(User{Active: true}) {
		t.Error("an unverified user can post")
	}
	if !CanPost(User{Active: true, Verified: true}) {
		t.Error("a verified active user cannot post")
	}
}
`,
		},
		failing: "TestCanPost",
	},
	{
		name: "stray-not",
		files: map[string]string{
			"route/route.go": "package route\n\nimport \"strings\"\n\n// IsAPI reports whether a path is under /api/.\nfunc IsAPI(path string) bool {\n\tif !strings.HasPrefix(path, \"/api/\") {\n\t\treturn true\n\t}\n\treturn false\n}\n",
			"route/route_test.go": `package route

import "testing"

func TestIsAPI(t *testing.T) {
	if !IsAPI("/api/users") {
		t.Error("IsAPI(/api/users) = false")
	}
	if IsAPI("/home") {
		t.Error("IsAPI(/home) = true")
	}
}
`,
		},
		failing: "TestIsAPI",
	},
	{
		name: "loop-start",
		files: map[string]string{
			"stats/sum.go":    "package stats\n\n// Sum adds xs.\nfunc Sum(xs []int) int {\n\ts := 0\n\tfor i := 1; i < len(xs); i++ {\n\t\ts += xs[i]\n\t}\n\treturn s\n}\n",
			"stats/report.go": "package stats\n\nimport \"fmt\"\n\n// Report describes xs.\nfunc Report(xs []int) string {\n\treturn fmt.Sprintf(\"n=%d sum=%d\", len(xs), Sum(xs))\n}\n",
			"stats/report_test.go": `package stats

import "testing"

func TestReport(t *testing.T) {
	if got := Report([]int{4, 5, 6}); got != "n=3 sum=15" {
		t.Errorf("Report = %q, want %q", got, "n=3 sum=15")
	}
}
`,
		},
		failing: "TestReport",
	},
	{
		name: "min-direction",
		files: map[string]string{
			"temps/temps.go": "package temps\n\n// Coldest is the lowest reading.\nfunc Coldest(readings []int) int {\n\tm := readings[0]\n\tfor _, r := range readings[1:] {\n\t\tif r > m {\n\t\t\tm = r\n\t\t}\n\t}\n\treturn m\n}\n",
			"temps/temps_test.go": `package temps

import "testing"

func TestColdest(t *testing.T) {
	if got := Coldest([]int{12, -3, 7}); got != -3 {
		t.Errorf("Coldest = %d, want -3", got)
	}
}
`,
		},
		failing: "TestColdest",
	},
	{
		name: "bool-constant",
		files: map[string]string{
			"forms/forms.go": "package forms\n\nimport \"strings\"\n\n// ValidEmail is a rough check of an address.\nfunc ValidEmail(s string) bool {\n\tat := strings.IndexByte(s, '@')\n\tif at <= 0 || at == len(s)-1 {\n\t\treturn false\n\t}\n\treturn false\n}\n",
			"forms/forms_test.go": `package forms

import "testing"

func TestValidEmail(t *testing.T) {
	for _, s := range []string{"a@b.c", "me@example.org"} {
		if !ValidEmail(s) {
			t.Errorf("ValidEmail(%q) = false", s)
		}
	}
	if ValidEmail("nope") {
		t.Error("ValidEmail(nope) = true")
	}
}
`,
		},
		failing: "TestValidEmail",
	},
	{
		name: "equality",
		files: map[string]string{
			"tags/tags.go": "package tags\n\n// Clean drops empty tags.\nfunc Clean(tags []string) []string {\n\tvar out []string\n\tfor _, t := range tags {\n\t\tif t != \"\" {\n\t\t\tcontinue\n\t\t}\n\t\tout = append(out, t)\n\t}\n\treturn out\n}\n",
			"tags/tags_test.go": `package tags

import (
	"reflect"
	"testing"
)

func TestClean(t *testing.T) {
	if got := Clean([]string{"go", "", "db"}); !reflect.DeepEqual(got, []string{"go", "db"}) {
		t.Errorf("Clean = %q", got)
	}
}
`,
		},
		failing: "TestClean",
	},
	{
		name: "deep-chain",
		files: map[string]string{
			"table/table.go": "package table\n\nimport \"strings\"\n\n// Render lays rows out in a column of the given width.\nfunc Render(rows []string, width int) string {\n\tvar b strings.Builder\n\tfor _, r := range rows {\n\t\tb.WriteString(cell(r, width))\n\t\tb.WriteString(\"|\\n\")\n\t}\n\treturn b.String()\n}\n",
			"table/cell.go":  "package table\n\nimport \"strings\"\n\nfunc cell(s string, width int) string {\n\treturn s + pad(width-len(s))\n}\n\nfunc pad(n int) string {\n\tif n <= 0 {\n\t\treturn \"\"\n\t}\n\treturn strings.Repeat(\" \", n+1)\n}\n",
			"table/table_test.go": `package table

import "testing"

func TestRender(t *testing.T) {
	want := "ab  |\nabcd|\n"
	if got := Render([]string{"ab", "abcd"}, 4); got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}
`,
		},
		failing: "TestRender",
	},
	{
		name: "big-file",
		files: map[string]string{
			"geo/geo.go":      bigGeo(),
			"geo/geo_test.go": "package geo\n\nimport \"testing\"\n\nfunc TestPerimeter(t *testing.T) {\n\tif got := Perimeter(3, 4); got != 14 {\n\t\tt.Errorf(\"Perimeter(3, 4) = %d, want 14\", got)\n\t}\n}\n",
		},
		failing: "TestPerimeter",
	},
	{
		name: "chatty-package",
		files: map[string]string{
			"feed/feed.go": "package feed\n\n// Page returns the items of page p (from 0) of size n.\nfunc Page(items []int, p, n int) []int {\n\tstart := p * n\n\tif start >= len(items) {\n\t\treturn nil\n\t}\n\tend := start + n\n\tif end < len(items) {\n\t\tend = len(items)\n\t}\n\treturn items[start:end]\n}\n",
			"feed/feed_test.go": `package feed

import (
	"fmt"
	"strings"
	"testing"
)

func TestNoise(t *testing.T) {
	for i := 0; i < 500; i++ {
		t.Run(fmt.Sprint(i), func(t *testing.T) { t.Log(strings.Repeat("z", 700)) })
	}
}

func TestPage(t *testing.T) {
	items := []int{1, 2, 3, 4, 5}
	if got := fmt.Sprint(Page(items, 1, 2)); got != "[3 4]" {
		t.Errorf("Page(items, 1, 2) = %s, want [3 4]", got)
	}
}
`,
		},
		failing: "TestPage",
	},
}

// bigGeo is a long file whose bug sits far from the top, in a helper the
// test reaches through another function.
func bigGeo() string {
	var b strings.Builder
	b.WriteString("package geo\n\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "// Scale%d scales v by %d.\nfunc Scale%d(v int) int {\n\treturn v * %d\n}\n\n", i, i+2, i, i+2)
	}
	b.WriteString("// Perimeter is the perimeter of a w×h rectangle.\nfunc Perimeter(w, h int) int {\n\treturn 2 * side(w, h)\n}\n\n")
	b.WriteString("func side(w, h int) int {\n\treturn w - h\n}\n")
	return b.String()
}

// BenchmarkOfflineNoBlame runs the offline policy on each no-blame case and
// prints a table: which it fixed (the failing test passes and no test of
// the module fails after its patch), in how many steps, and why it
// stopped. Run it with
//
//	go test -run '^$' -bench OfflineNoBlame -benchtime 1x -v ./pkg/harness/offline
//
// (-bench 'OfflineNoBlame/NAME' runs one case; REDFIX_FIGURES_LOG=1 logs
// the policy's steps).
func BenchmarkOfflineNoBlame(b *testing.B) {
	var rows []string
	fixed, ran := 0, 0
	for _, c := range noBlameCases {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ok, row := runNoBlame(b, c)
				if i == 0 {
					ran++
					if ok {
						fixed++
					}
					rows = append(rows, row)
				}
				b.ReportMetric(map[bool]float64{true: 1}[ok], "fixed")
			}
		})
	}
	b.Logf("offline policy on %d single-token failures without a blame commit:\n%-22s %-6s %5s  %-9s %s\n%s\nfixed %d of %d",
		ran, "case", "fixed", "steps", "stop", "time", strings.Join(rows, "\n"), fixed, ran)
}

func runNoBlame(b *testing.B, c noBlameCase) (bool, string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	start := time.Now()
	dir := filepath.Join(b.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	files := map[string]string{"go.mod": figuresMod}
	for k, v := range c.files {
		files[k] = v
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	head, err := repo.CommitAll(ctx, "Add "+c.name)
	if err != nil {
		b.Fatal(err)
	}
	runner := testrun.Runner{Timeout: 2 * time.Minute}
	out, err := runner.Run(ctx, dir, []string{c.failing}, 1)
	if err != nil {
		b.Fatal(err)
	}
	if len(out.Failed) == 0 {
		b.Fatalf("%s: %s does not fail: %s", c.name, c.failing, out.Summary())
	}
	tk := task.Task{
		ID: "figures-" + c.name, Repo: dir, Commit: head, Failures: out.Failed,
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
		Status:    task.StatusRunning,
	}
	ws, err := workspace.Open(ctx, dir, head, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	log := zap.NewNop()
	if os.Getenv("REDFIX_FIGURES_LOG") != "" {
		log = zaptest.NewLogger(b)
	}
	h := harness.New(harness.Config{MaxSteps: maxSteps}, offline.New(log), runner, nil, log)
	res, err := h.Run(ctx, ws, tk, nil)
	stop := res.Stop
	if err != nil {
		stop = "error"
	}
	ok := false
	if res.Patch != "" && !strings.Contains(res.Patch, "_test.go") {
		after, err := runner.Run(ctx, ws.Dir, []string{c.failing}, 1)
		all, err2 := runner.RunPackages(ctx, ws.Dir, []string{"./..."})
		ok = err == nil && err2 == nil && after.OK() && all.OK()
	}
	return ok, fmt.Sprintf("%-22s %-6v %5d  %-9s %s", c.name, ok, res.Steps, stop, time.Since(start).Round(time.Second))
}
