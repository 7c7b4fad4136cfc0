package offline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/offline"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/task"
)

// The offline policy's regression corpus (testdata/corpus/LANG): each
// single-point template kind (comparison, boundary, arithmetic operator,
// boolean, constant, slice bound, null check, swapped arguments) broken by
// a culprit commit that also adds unrelated code beside the bug, the
// failing test calling only the broken function; in Go, Python (pytest)
// and TypeScript (vitest); and, in each, the narrowest change
// (09-shared-helper: the bug in one caller of a helper two functions share,
// where widening the helper passes every test too). Each must be repaired,
// with the line the scenario's "fix:" names, within the step budget; the
// table the tests log counts the candidates tried before the right one.
// Print it with
//
//	go test -run 'TestCorpus' -v ./pkg/harness/offline | grep -A30 'corpus:'
//
// The tests repair every case with the culprit blamed, in each language,
// and without a blame commit in Python (the cheapest runs): how the policy
// ranks without a blame (the failing test's coverage and calls, then the
// templates' priors) is the same whatever the language, and each driver's
// coverage is its own tests' (Localize). BenchmarkCorpusNoBlame repairs
// the Go and TypeScript cases without a blame commit too and prints their
// tables:
//
//	go test -run '^$' -bench CorpusNoBlame -benchtime 1x -v ./pkg/harness/offline

// The corpus's step budgets: with the culprit blamed, the candidates on
// the lines it changed in the broken function must come first for a repair
// to fit in it; without, localization takes steps of its own and the
// templates of the lines the failing test runs are told apart only by
// their priors, so the policy's default budget.
const (
	corpusBudget        = 20
	corpusBudgetNoBlame = offline.DefaultMaxSteps
)

// corpusLang is one language's corpus: its scenarios, how their
// repositories are laid out, and its driver.
type corpusLang struct {
	name string
	dir  string // under testdata/corpus
	// extra are scenarios of other directories the corpus reuses.
	extra []string
	// base are files the first commit gets besides the scenario's.
	base []txtar.File
	// driver is the language's driver and the context its commands run
	// in, for a case.
	driver func(t testing.TB, name string) (tools.Language, context.Context)
	// unblamedInTests: the tests repair its cases without a blame commit
	// too (the others' are BenchmarkCorpusNoBlame's).
	unblamedInTests bool
}

// corpusRow is a case's line in the table.
type corpusRow struct {
	name          string
	fixed         bool
	steps, tested int
	before        int
	stop          string
}

// runCorpus repairs every case of the language, side by side, with the
// culprit blamed and without a blame commit (the failing test's coverage
// and calls alone), and logs a table of each.
func runCorpus(t *testing.T, cl corpusLang) {
	if testing.Short() {
		t.Skip("runs the tests of real repositories")
	}
	scs := corpusScenarios(t, cl)
	t.Run("blamed", func(t *testing.T) { runCorpusMode(t, cl, scs, true) })
	if cl.unblamedInTests {
		t.Run("unblamed", func(t *testing.T) { runCorpusMode(t, cl, scs, false) })
	}
}

// corpusScenarios are the language's cases.
func corpusScenarios(tb testing.TB, cl corpusLang) []scenario {
	scs := loadScenarios(tb, filepath.Join("corpus", cl.dir))
	for _, p := range cl.extra {
		scs = append(scs, loadScenario(tb, filepath.Join("testdata", p)))
	}
	return scs
}

func runCorpusMode(t *testing.T, cl corpusLang, scs []scenario, blamed bool) {
	var mu sync.Mutex
	var rows []corpusRow
	t.Run("cases", func(t *testing.T) {
		for _, sc := range scs {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				row := repairCorpusCase(t, cl, sc, blamed)
				mu.Lock()
				rows = append(rows, row)
				mu.Unlock()
			})
		}
	})
	t.Log(corpusTable(cl, rows, blamed))
}

// corpusTable is the table of a language's cases.
func corpusTable(cl corpusLang, rows []corpusRow, blamed bool) string {
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	var b strings.Builder
	blame, budget := "the culprit blamed", corpusBudget
	if !blamed {
		blame, budget = "no blame commit", corpusBudgetNoBlame
	}
	fmt.Fprintf(&b, "corpus: %s, %s, budget %d steps\n%-34s %-6s %5s %6s %14s  %s\n", cl.name, blame, budget, "case", "fixed", "steps", "tested", "tried before", "stop")
	fixed := 0
	for _, r := range rows {
		if r.fixed {
			fixed++
		}
		fmt.Fprintf(&b, "%-34s %-6v %5d %6d %14d  %s\n", r.name, r.fixed, r.steps, r.tested, r.before, r.stop)
	}
	fmt.Fprintf(&b, "fixed %d of %d", fixed, len(rows))
	return b.String()
}

// repairCorpusCase makes the case's repository (the first commit good, the
// second the culprit, blamed or not), repairs it and checks the patch.
func repairCorpusCase(t testing.TB, cl corpusLang, sc scenario, blamed bool) corpusRow {
	row := corpusRow{name: sc.name}
	var archives []string
	for i, files := range sc.commits {
		ar := &txtar.Archive{Comment: []byte(fmt.Sprintf("%s: stage %d\n", sc.name, i)), Files: files}
		if i == 0 {
			ar.Files = append(append([]txtar.File(nil), cl.base...), files...)
		}
		archives = append(archives, string(txtar.Format(ar)))
	}
	drv, ctx := cl.driver(t, fmt.Sprintf("%s-%v", sc.name, blamed))
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	dir, commits := pythontest.History(t, archives...)
	head := commits[len(commits)-1]
	var bis task.Bisection
	if blamed {
		bis = task.Bisection{Good: commits[0], Bad: head, Blame: commits[1], Subject: "Tidy up and extend", Steps: 2}
	}
	budget := corpusBudget
	if !blamed {
		budget = corpusBudgetNoBlame
	}
	tk := failingTask(t, ctx, drv, dir, head, sc.failing, "corpus-"+sc.name, bis)
	res, ws := repairOffline(t, ctx, drv, tk, budget)
	row.steps, row.tested, row.before, row.stop = res.Steps, res.PatchesTested, res.TriedBefore, res.Stop
	mode := "blamed"
	if !blamed {
		mode = "unblamed"
	}
	if slices.Contains(sc.misses, mode) {
		row.stop += " (known miss)"
		if res.TestsPassed {
			t.Errorf("a known miss is repaired now: drop its \"miss: %s\" line", mode)
		}
		t.Logf("a known miss, %s: not repaired within %d steps", mode, budget)
		return row
	}
	if res.Stop != harness.StopExit || !res.TestsPassed {
		t.Errorf("not repaired within %d steps: stop=%s passed=%v", budget, res.Stop, res.TestsPassed)
		return row
	}
	right := false
	for _, f := range sc.fixes {
		right = right || strings.Contains(res.Patch, "\n+"+f+"\n")
	}
	if !right || strings.Count(res.Patch, "+++ ") != 1 {
		t.Errorf("the patch is not the fix (%q):\n%s", sc.fixes, res.Patch)
		return row
	}
	// The failing test's whole file, or package, passes.
	pkgs := []string{"./..."}
	if cl.dir != "go" {
		pkgs = []string{strings.SplitN(sc.failing, "::", 2)[0]}
	}
	all, err := drv.RunPackages(ctx, ws.Dir, pkgs)
	if err != nil {
		t.Fatal(err)
	}
	if !all.OK() {
		t.Errorf("after the patch: %s\n%s", all.Summary(), all.Output)
		return row
	}
	row.fixed = true
	return row
}

func TestCorpusGo(t *testing.T) { runCorpus(t, goCorpus) }

var goCorpus = corpusLang{name: "Go", dir: "go",
	extra: []string{"repairs/09-sign-beside-new-code.txtar", "repairs/10-boundary-beside-helpers.txtar"},
	driver: func(t testing.TB, _ string) (tools.Language, context.Context) {
		return golang.Driver{Tests: golang.Runner{Timeout: 2 * time.Minute}}, context.Background()
	}}

func TestCorpusPython(t *testing.T) { runCorpus(t, pythonCorpus) }

var pythonCorpus = corpusLang{name: "Python (pytest)", dir: "py", unblamedInTests: true,
	base: []txtar.File{
		{Name: "pyproject.toml", Data: []byte("[project]\nname = \"lib\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n")},
		{Name: "lib/__init__.py"}, {Name: "tests/__init__.py"},
	},
	driver: func(t testing.TB, _ string) (tools.Language, context.Context) {
		pythontest.Require(t)
		return python.Driver{Timeout: 2 * time.Minute}, context.Background()
	}}

func TestCorpusTypeScript(t *testing.T) {
	if testing.Short() {
		t.Skip("runs vitest in real repositories")
	}
	runCorpus(t, typeScriptCorpus())
}

// typeScriptCorpus is the TypeScript corpus on the price fixture project:
// its pinned vitest and lockfile, whose packages are installed once into
// the shared cache.
func typeScriptCorpus() corpusLang {
	base := txtar.Parse([]byte(nodetest.Project("price", "price")))
	return corpusLang{name: "TypeScript (vitest)", dir: "ts", base: base.Files,
		driver: func(t testing.TB, name string) (tools.Language, context.Context) {
			nodetest.Require(t)
			return node.Driver{CacheDir: nodetest.CacheDir(t), Timeout: 2 * time.Minute}, nodetest.Confined(t, "o/corpus-"+name)
		}}
}

// BenchmarkCorpusNoBlame repairs the Go and TypeScript corpus without a
// blame commit, case by case, and prints each language's table (the tests
// do Python's); a case not repaired fails it as it would a test, but a
// known miss.
func BenchmarkCorpusNoBlame(b *testing.B) {
	for _, cl := range []corpusLang{goCorpus, typeScriptCorpus()} {
		b.Run(cl.dir, func(b *testing.B) {
			scs := corpusScenarios(b, cl)
			var rows []corpusRow
			for _, sc := range scs {
				b.Run(sc.name, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						row := repairCorpusCase(b, cl, sc, false)
						if i == 0 {
							rows = append(rows, row)
						}
					}
				})
			}
			b.Log(corpusTable(cl, rows, false))
		})
	}
}
