package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/worker"
)

// The ledger module that `worker validate` is tried on: package money, and
// package invoice, which imports it. The blame commit added Percent and broke
// Add; TestAdd fails since. invoice's TestLegacyRounding has always failed.
const (
	ledgerMod = "module example.com/ledger\n\ngo 1.22\n"

	moneyGood = `package money

import "fmt"

// Cents is an amount of money in cents.
type Cents int64

// Add sums two amounts.
func Add(a, b Cents) Cents {
	return a + b
}

// Format writes c as units and cents: "12.34".
func Format(c Cents) string {
	return fmt.Sprintf("%d.%02d", c/100, c%100)
}
`
	moneyBroken = `package money

import "fmt"

// Cents is an amount of money in cents.
type Cents int64

// Add sums two amounts.
func Add(a, b Cents) Cents {
	return a - b
}

// Format writes c as units and cents: "12.34".
func Format(c Cents) string {
	return fmt.Sprintf("%d.%02d", c/100, c%100)
}

// Percent is p percent of c, rounded down.
func Percent(c Cents, p int64) Cents {
	return c * Cents(p) / 100
}

// Discount takes p percent off c.
func Discount(c Cents, p int64) Cents {
	return c - Percent(c, p)
}
`
	moneyTest = `package money

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(150, 275); got != 425 {
		t.Fatalf("Add(150, 275) = %d, want 425", got)
	}
}

func TestFormatCents(t *testing.T) {
	if got := Format(7); got != "0.07" {
		t.Errorf("Format(7) = %q, want 0.07", got)
	}
}
`
	invoiceGo = `package invoice

import "example.com/ledger/money"

// Total sums the lines.
func Total(lines []money.Cents) money.Cents {
	var t money.Cents
	for _, l := range lines {
		t = money.Add(t, l)
	}
	return t
}

// Render is the invoice's last line.
func Render(lines []money.Cents) string {
	return "total: " + money.Format(Total(lines))
}
`
	invoiceTest = `package invoice

import (
	"testing"

	"example.com/ledger/money"
)

func TestRender(t *testing.T) {
	if got := Render([]money.Cents{0, 0}); got != "total: 0.00" {
		t.Errorf("Render = %q", got)
	}
}
`
	legacyTest = `package invoice

import "testing"

func TestLegacyRounding(t *testing.T) {
	t.Fatal("legacy rounding was never implemented")
}
`
)

// honestFix mends Add: one line.
var honestFix = strings.Replace(moneyBroken, "return a - b", "return a + b", 1)

// noEnv is an empty environment: the tests do not depend on the machine's
// configuration, and may run in parallel.
func noEnv(string) string { return "" }

type ledger struct {
	dir, blame string
}

func newLedger(t *testing.T) ledger {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ledger")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"go.mod": ledgerMod, "money/money.go": moneyGood, "money/money_test.go": moneyTest,
		"invoice/invoice.go": invoiceGo, "invoice/invoice_test.go": invoiceTest, "invoice/legacy_test.go": legacyTest,
	})
	if _, err := repo.CommitAll(ctx, "money and invoices"); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"money/money.go": moneyBroken})
	blame, err := repo.CommitAll(ctx, "money: percentages and discounts")
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"README": "the ledger\n"})
	if _, err := repo.CommitAll(ctx, "readme"); err != nil {
		t.Fatal(err)
	}
	return ledger{dir: dir, blame: blame}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// patchOf is the diff that turns the ledger's HEAD into change, written
// with git in a scratch copy so that the ledger itself stays clean.
func (l ledger) patchOf(t *testing.T, change map[string]string) string {
	t.Helper()
	ctx := context.Background()
	scratch, err := gitrepo.Clone(ctx, l.dir, filepath.Join(t.TempDir(), "scratch"))
	if err != nil {
		t.Fatal(err)
	}
	if err := scratch.Checkout(ctx, "HEAD"); err != nil {
		t.Fatal(err)
	}
	for name, body := range change {
		if body == "" {
			if err := os.Remove(filepath.Join(scratch.Dir, filepath.FromSlash(name))); err != nil {
				t.Fatal(err)
			}
			delete(change, name)
		}
	}
	writeFiles(t, scratch.Dir, change)
	diff, err := scratch.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return diff
}

// validate runs `worker validate --json` and returns its verdict, gates by
// name and exit status.
func validate(t *testing.T, args ...string) (worker.Validation, map[string]task.Gate, int) {
	t.Helper()
	return validateIn(t, noEnv, args...)
}

// validateIn is validate with the environment getenv.
func validateIn(t *testing.T, getenv func(string) string, args ...string) (worker.Validation, map[string]task.Gate, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := validateCommand(context.Background(), append(args, "--json"), getenv, &stdout, &stderr)
	code := ExitCode(err)
	if code == 2 {
		t.Fatalf("validate %q: exit 2: %v\nstderr: %s", args, err, stderr.String())
	}
	var v worker.Validation
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatalf("validate --json printed no JSON object: %v\n%s", err, stdout.String())
	}
	gates := map[string]task.Gate{}
	for _, g := range v.Gates {
		gates[g.Name] = g
		t.Logf("%-10s %-7s %s", g.Name, g.Verdict, g.Detail)
	}
	return v, gates, code
}

func writePatch(t *testing.T, patch string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "candidate.diff")
	if err := os.WriteFile(p, []byte(patch), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func wantGate(t *testing.T, gates map[string]task.Gate, name, verdict string, detail ...string) {
	t.Helper()
	g, ok := gates[name]
	if !ok {
		t.Errorf("no %s gate", name)
		return
	}
	if g.Verdict != verdict {
		t.Errorf("%s: %s, want %s (%s)", name, g.Verdict, verdict, g.Detail)
	}
	for _, d := range detail {
		if !strings.Contains(g.Detail, d) {
			t.Errorf("%s: detail does not mention %q:\n%s", name, d, g.Detail)
		}
	}
}

func TestValidateHonestFixPassesEveryGate(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	patch := writePatch(t, l.patchOf(t, map[string]string{"money/money.go": honestFix}))
	v, gates, code := validate(t, "--repo", l.dir, "--patch", patch, "--test", "TestAdd", "--blame", l.blame)
	if code != 0 || !v.Accepted || len(v.RejectedBy) != 0 {
		t.Fatalf("exit %d, accepted %v, rejected by %v; want 0, accepted", code, v.Accepted, v.RejectedBy)
	}
	if len(v.AtBase) != 1 || !v.AtBase[0].Failing || !strings.Contains(v.AtBase[0].Message, "want 425") {
		t.Errorf("at base = %+v, want TestAdd failing with its message", v.AtBase)
	}
	var names []string
	for _, g := range v.Gates {
		names = append(names, g.Name)
	}
	if got, want := strings.Join(names, ","), "apply,integrity,revert,static,oracle,regression,judge"; got != want {
		t.Errorf("gates = %s, want %s", got, want)
	}
	wantGate(t, gates, "apply", task.GatePass, "1 file(s), +1 -1")
	wantGate(t, gates, "oracle", task.GatePass, "3/3 runs passed", "example.com/ledger/money.TestAdd")
	wantGate(t, gates, "regression", task.GatePass, "go test ./money and 1 dependent package(s): ./invoice",
		"no new failure", "failing at base "+task.Short(v.Base)+" too, not blamed: example.com/ledger/invoice.TestLegacyRounding")
	wantGate(t, gates, "judge", task.GateNotRun, "no model configured")

	// The same verdict for a person, and the clone untouched.
	var stdout, stderr bytes.Buffer
	if err := validateCommand(context.Background(), []string{"--repo", l.dir, "--patch", patch, "--test", "TestAdd"}, noEnv, &stdout, &stderr); err != nil {
		t.Fatalf("validate: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"before the patch example.com/ledger/money.TestAdd fails: ", "oracle     PASS", "ACCEPTED: every gate passed (the judge did not run: no model configured)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
	status, err := gitrepo.Repo{Dir: l.dir}.Git(context.Background(), "status", "--porcelain")
	if err != nil || status != "" {
		t.Errorf("the clone changed: %q, %v", status, err)
	}
}

// Each cheat is caught, and by the gate whose job it is.
func TestValidateCatchesCheats(t *testing.T) {
	t.Parallel()
	allowTests := filepath.Join(t.TempDir(), "allow-tests.yaml")
	if err := os.WriteFile(allowTests, []byte("validators:\n  allow_test_edits: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		config string // a configuration file, or ""
		change map[string]string
		gate   string
		detail []string
	}{
		{
			name:   "skipped test",
			config: allowTests,
			change: map[string]string{"money/money_test.go": strings.Replace(moneyTest, "func TestAdd(t *testing.T) {\n", "func TestAdd(t *testing.T) {\n\tt.Skip(\"flaky on CI\")\n", 1)},
			gate:   "integrity", detail: []string{`money/money_test.go:6: adds a skip: t.Skip("flaky on CI")`},
		},
		{
			name:   "deleted test",
			config: allowTests,
			change: map[string]string{"money/money_test.go": strings.Replace(moneyTest, "func TestAdd(t *testing.T) {\n\tif got := Add(150, 275); got != 425 {\n\t\tt.Fatalf(\"Add(150, 275) = %d, want 425\", got)\n\t}\n}\n\n", "", 1)},
			gate:   "integrity", detail: []string{"deletes test TestAdd"},
		},
		{
			name:   "weakened assertion",
			config: allowTests,
			change: map[string]string{"money/money_test.go": strings.Replace(moneyTest, "got != 425", "got != -125", 1)},
			gate:   "integrity", detail: []string{"removes an assertion: if got := Add(150, 275); got != 425 {"},
		},
		{
			name:   "test edit without the policy",
			change: map[string]string{"money/money_test.go": strings.Replace(moneyTest, "got != 425", "got != -125", 1)},
			gate:   "integrity", detail: []string{"money/money_test.go: edits test file (test edits are not allowed for this repository)"},
		},
		{
			name:   "blame commit fully reverted",
			change: map[string]string{"money/money.go": moneyGood},
			gate:   "revert", detail: []string{"reverts ", `"money: percentages and discounts"`},
		},
		{
			name: "passes once, fails on re-runs",
			change: map[string]string{"money/money.go": strings.Replace(moneyBroken, "func Add(a, b Cents) Cents {\n\treturn a - b\n}",
				"var warmed bool\n\nfunc Add(a, b Cents) Cents {\n\tif !warmed {\n\t\twarmed = true\n\t\treturn a + b\n\t}\n\treturn a - b\n}", 1)},
			gate: "oracle", detail: []string{"go test -count=3", "example.com/ledger/money.TestAdd failed: "},
		},
		{
			// money's own tests pass; invoice, which imports it, breaks.
			name: "breaks a test in a dependent package",
			change: map[string]string{"money/money.go": strings.Replace(honestFix, "func Format(c Cents) string {\n",
				"func Format(c Cents) string {\n\tif c == 0 {\n\t\treturn \"-\"\n\t}\n", 1)},
			gate: "regression", detail: []string{"go test ./money and 1 dependent package(s): ./invoice", "1 new failure(s)",
				"example.com/ledger/invoice.TestRender: ", `Render = "total: -"`,
				"not blamed: example.com/ledger/invoice.TestLegacyRounding"},
		},
		{
			name: "special-cased input",
			change: map[string]string{"money/money.go": strings.Replace(moneyBroken, "func Add(a, b Cents) Cents {\n",
				"func Add(a, b Cents) Cents {\n\tif a == 150 && b == 275 {\n\t\treturn 425\n\t}\n", 1)},
			gate: "integrity", detail: []string{"money/money.go:10: special-cases a value of the failing test: a == 150 compares with 150, which TestAdd uses at money/money_test.go:6",
				"b == 275 compares with 275"},
		},
		{
			name:   "does not build",
			change: map[string]string{"money/money.go": strings.Replace(moneyBroken, "return a - b", "return a + c", 1)},
			gate:   "static", detail: []string{"build: money/money.go:10:13: undefined: c"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := newLedger(t)
			args := []string{"--repo", l.dir, "--patch", writePatch(t, l.patchOf(t, c.change)), "--test", "TestAdd", "--blame", l.blame}
			if c.config != "" {
				args = append(args, "--config", c.config)
			}
			v, gates, code := validate(t, args...)
			if code != 1 || v.Accepted {
				t.Fatalf("exit %d, accepted %v; want 1, rejected", code, v.Accepted)
			}
			if len(v.RejectedBy) == 0 || v.RejectedBy[0] != c.gate {
				t.Errorf("rejected by %v, want %s first", v.RejectedBy, c.gate)
			}
			wantGate(t, gates, c.gate, task.GateFail, c.detail...)
			wantGate(t, gates, "judge", task.GateNotRun, "skipped: ")
		})
	}
}

func TestValidatePatchThatDoesNotApply(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	good := l.patchOf(t, map[string]string{"money/money.go": strings.Replace(honestFix, "rounded down", "rounded toward zero", 1)})
	// The second hunk's context no longer matches the file.
	stale := strings.Replace(good, "// Percent is p percent", "// Percent was p percent", 1)
	v, gates, code := validate(t, "--repo", l.dir, "--patch", writePatch(t, stale), "--test", "TestAdd")
	if code != 1 || v.Accepted || strings.Join(v.RejectedBy, ",") != "apply" {
		t.Fatalf("exit %d, rejected by %v; want 1, apply", code, v.RejectedBy)
	}
	wantGate(t, gates, "apply", task.GateFail, "hunk 2 of 2 in money/money.go (@@ -15,7 +15,7 @@) does not apply", "// Percent was p percent", "patch failed: money/money.go:15")
	if len(v.Gates) != 1 {
		t.Errorf("gates after a patch that does not apply: %+v", v.Gates)
	}
}

// A patch adding one line of three million nested parentheses is refused
// by integrity before any parser reads it, naming the file and line, with
// every later gate and the judge skipped; and the command runs under the
// worker's memory limit, put back when it returns. Not parallel: it reads
// the process's memory limit, which the other commands' tests set too.
func TestValidateRefusesAnOutOfBoundsPatchUnread(t *testing.T) {
	l := newLedger(t)
	const n = 1_500_000
	deep := honestFix + "\nvar deep = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n"
	patch := writePatch(t, l.patchOf(t, map[string]string{"money/money.go": deep}))
	getenv := func(k string) string {
		if k == "REDFIX_WORKER_MEMORY_LIMIT_MB" {
			return "512"
		}
		return ""
	}
	before := debug.SetMemoryLimit(-1)
	var stdout, stderr bytes.Buffer
	err := validateCommand(context.Background(), []string{"--repo", l.dir, "--patch", patch, "--test", "TestAdd", "--json"}, getenv, &stdout, &stderr)
	if code := ExitCode(err); code != 1 {
		t.Fatalf("exit %d (%v), want 1 (rejected)\nstderr: %s", code, err, stderr.String())
	}
	var v worker.Validation
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatalf("no JSON verdict: %v", err)
	}
	gates := map[string]task.Gate{}
	for _, g := range v.Gates {
		gates[g.Name] = g
	}
	at := fmt.Sprintf("money/money.go:%d: ", strings.Count(honestFix, "\n")+2)
	wantGate(t, gates, "integrity", task.GateFail, "the patch is refused unread", at+"adds a line of 3000012 bytes, more than the 8192", at+"adds brackets nested more than 256 deep")
	for _, name := range []string{"revert", "static", "oracle", "regression", "judge"} {
		wantGate(t, gates, name, task.GateNotRun, "skipped: integrity failed")
	}
	if os.Getenv("GOMEMLIMIT") == "" && !strings.Contains(stderr.String(), "512 MiB (configuration)") {
		t.Errorf("the command did not say it runs under the configured memory limit:\n%s", stderr.String())
	}
	if after := debug.SetMemoryLimit(-1); after != before {
		t.Errorf("the memory limit after the command is %d, want %d as before it", after, before)
	}
}

func TestValidateUsageAndMachineryErrors(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	patch := writePatch(t, l.patchOf(t, map[string]string{"money/money.go": honestFix}))
	ctx := context.Background()
	for _, c := range []struct {
		name string
		args []string
		says string
	}{
		{"no patch", []string{"--repo", l.dir, "--test", "TestAdd"}, "--patch is required"},
		{"no test", []string{"--repo", l.dir, "--patch", patch}, "--test is required"},
		{"missing patch file", []string{"--repo", l.dir, "--patch", patch + ".nope", "--test", "TestAdd"}, "read the patch"},
		{"unknown test", []string{"--repo", l.dir, "--patch", patch, "--test", "TestNope"}, "no package of example.com/ledger defines TestNope"},
		{"not a repository", []string{"--repo", t.TempDir(), "--patch", patch, "--test", "TestAdd"}, "not a git repository"},
		{"unknown blame", []string{"--repo", l.dir, "--patch", patch, "--test", "TestAdd", "--blame", "nope"}, "--blame"},
		{"bad flag", []string{"--frobnicate"}, "frobnicate"},
	} {
		var stdout, stderr bytes.Buffer
		err := validateCommand(ctx, c.args, noEnv, &stdout, &stderr)
		if ExitCode(err) != 2 || !strings.Contains(err.Error()+stderr.String(), c.says) {
			t.Errorf("%s: exit %d, %v (stderr %q); want 2 saying %q", c.name, ExitCode(err), err, stderr.String(), c.says)
		}
	}
}
