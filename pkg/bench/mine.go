package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/workspace"
)

// Skip reasons: the first word of a skipped commit's reason, counted in the
// summary.
const (
	SkipRoot       = "root-commit"
	SkipNoGo       = "no-go-change"
	SkipCodeOnly   = "code-only"
	SkipTestOnly   = "test-only"
	SkipTooLarge   = "too-large"
	SkipNoModule   = "no-module"
	SkipNoTests    = "no-test-functions"
	SkipBuild      = "does-not-build"
	SkipTestsBuild = "tests-need-new-api"
	SkipNetwork    = "needs-network"
	SkipFlaky      = "flaky"
	SkipFailFix    = "fails-with-fix"
	SkipPassOld    = "passes-without-fix"
)

// MineOptions says what to mine and how.
type MineOptions struct {
	Repo string // the local clone
	Head string // the newest commit (default HEAD)
	// Since bounds the history: a revision (its descendants on the first
	// parent line) or a date git understands ("2024-01-01", "6 months ago").
	Since string
	// Max bounds the commits examined with test runs (those that change
	// code and tests together), counting those of earlier runs; 0: no bound.
	Max int
	// MaxLines is the largest fix, in changed non-test lines (default 200).
	MaxLines int
	// Runs is how many times each test runs in each direction (default 3).
	Runs int
	// Out is the tasks file; the state file is Out + ".state.jsonl".
	Out    string
	Runner testrun.Runner
	// Progress is told of each commit; nil for none.
	Progress Progress
	Log      *zap.Logger
}

// Verdict is what mining decided about one commit: a line of the state file.
type Verdict struct {
	Commit    string `json:"commit"`
	Subject   string `json:"subject,omitempty"`
	Qualified bool   `json:"qualified,omitempty"`
	// Skip is the reason's kind (one of the Skip constants), Reason its
	// words.
	Skip   string `json:"skip,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Examined is set when the commit's tests were run (it counts against
	// MineOptions.Max).
	Examined bool     `json:"examined,omitempty"`
	Tests    []string `json:"tests,omitempty"`
	Seconds  float64  `json:"seconds,omitempty"`
}

// MineSummary counts what a mine saw, this run and earlier ones.
type MineSummary struct {
	Commits   int            `json:"commits"`   // on the first-parent line in range
	Examined  int            `json:"examined"`  // run with tests
	Qualified int            `json:"qualified"` // tasks written
	Resumed   int            `json:"resumed"`   // decided by an earlier run
	Skipped   map[string]int `json:"skipped"`   // by reason kind
}

// Progress hears of a mine's or a bench's advance.
type Progress interface {
	// Total sets how many units the bar counts to.
	Total(n int)
	// Step says what is being done on the current unit.
	Step(what string)
	// Done ends a unit with a line of what happened.
	Done(line string, counts bool)
}

// StatePath is the state file kept next to a tasks file.
func StatePath(out string) string { return out + ".state.jsonl" }

// commit is one commit of the history with its diff's files.
type commit struct {
	sha, parent, subject string
	files                []fileStat
}

type fileStat struct {
	path           string
	added, removed int
}

func isTestFile(p string) bool {
	return strings.HasSuffix(p, "_test.go") || strings.HasPrefix(p, "testdata/") || strings.Contains(p, "/testdata/")
}

func isCode(p string) bool { return strings.HasSuffix(p, ".go") && !isTestFile(p) }

// Mine walks the first-parent history from Head back to Since, newest
// first, and appends a task to Out for every commit that qualifies. What it
// decides about each commit goes to the state file, so that a second run
// continues where the first stopped. It stops between test runs when ctx
// ends; the commit in flight is decided again by the next run.
func Mine(ctx context.Context, o MineOptions) (MineSummary, error) {
	if o.Head == "" {
		o.Head = "HEAD"
	}
	if o.MaxLines <= 0 {
		o.MaxLines = 200
	}
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Progress == nil {
		o.Progress = nopProgress{}
	}
	sum := MineSummary{Skipped: map[string]int{}}
	abs, err := filepath.Abs(o.Repo)
	if err != nil {
		return sum, err
	}
	src := gitrepo.Repo{Dir: abs}
	head, err := src.Resolve(ctx, o.Head)
	if err != nil {
		return sum, fmt.Errorf("mine %s: %w", abs, err)
	}
	history, err := firstParentLog(ctx, src, head, o.Since)
	if err != nil {
		return sum, fmt.Errorf("mine %s: %w", abs, err)
	}
	sum.Commits = len(history)

	done := map[string]bool{}
	err = readLines(StatePath(o.Out), func(line []byte) error {
		var v Verdict
		if err := json.Unmarshal(line, &v); err != nil {
			return err
		}
		if !done[v.Commit] {
			done[v.Commit] = true
			sum.count(v)
		}
		return nil
	})
	if err != nil {
		return sum, fmt.Errorf("read the mine's state: %w", err)
	}
	tasks, err := ReadTasksFile(o.Out)
	if err != nil {
		return sum, err
	}
	for _, t := range tasks {
		// A task written just before an interruption that kept its verdict
		// from the state file.
		if t.Fix != "" && !done[t.Fix] {
			done[t.Fix] = true
			sum.count(Verdict{Commit: t.Fix, Qualified: true, Examined: true})
		}
	}
	sum.Resumed = len(done)

	// The bar counts the commits left to run tests on.
	left := 0
	for _, c := range history {
		if !done[c.sha] && classify(c, o.MaxLines) == nil {
			left++
		}
	}
	if o.Max > 0 {
		left = min(left, max(o.Max-sum.Examined, 0))
	}
	o.Progress.Total(left)

	var ws *workspace.Workspace
	defer func() {
		if ws != nil {
			_ = ws.Close()
		}
	}()
	for _, c := range history {
		if done[c.sha] {
			continue
		}
		if o.Max > 0 && sum.Examined >= o.Max {
			break
		}
		if err := ctx.Err(); err != nil {
			return sum, fmt.Errorf("mine interrupted (run it again to continue): %w", err)
		}
		v := Verdict{Commit: c.sha, Subject: c.subject}
		skip := classify(c, o.MaxLines)
		if skip == nil {
			if _, err := src.Git(ctx, "cat-file", "-e", c.sha+":go.mod"); err != nil {
				if ctx.Err() != nil {
					return sum, fmt.Errorf("mine interrupted (run it again to continue): %w", ctx.Err())
				}
				skip = skipf(SkipNoModule, "no go.mod at the repository's root (the code predates Go modules)")
			}
		}
		if skip != nil {
			v.Skip, v.Reason = skip.kind, skip.reason
		} else {
			if ws == nil {
				if ws, err = workspace.Open(ctx, abs, head, ""); err != nil {
					return sum, fmt.Errorf("mine: %w", err)
				}
			}
			started := time.Now()
			t, skip, err := examine(ctx, o, ws, c, abs)
			if err != nil {
				if ctx.Err() != nil {
					return sum, fmt.Errorf("mine interrupted (run it again to continue): %w", ctx.Err())
				}
				return sum, fmt.Errorf("mine %s: %w", task.Short(c.sha), err)
			}
			v.Examined, v.Seconds = true, time.Since(started).Seconds()
			if skip != nil {
				v.Skip, v.Reason = skip.kind, skip.reason
			} else {
				v.Qualified, v.Tests = true, t.Tests
				if err := appendLine(o.Out, t); err != nil {
					return sum, err
				}
			}
		}
		if err := appendLine(StatePath(o.Out), v); err != nil {
			return sum, err
		}
		sum.count(v)
		done[c.sha] = true
		o.Log.Debug("commit decided", zap.String("commit", c.sha), zap.Bool("qualified", v.Qualified), zap.String("skip", v.Skip))
		o.Progress.Done(verdictLine(v), v.Examined)
	}
	return sum, nil
}

func (s *MineSummary) count(v Verdict) {
	if v.Examined {
		s.Examined++
	}
	if v.Qualified {
		s.Qualified++
	} else if v.Skip != "" {
		s.Skipped[v.Skip]++
	}
}

// verdictLine is a commit's verdict in one line.
func verdictLine(v Verdict) string {
	subj := v.Subject
	if r := []rune(subj); len(r) > 60 {
		subj = string(r[:60]) + "…"
	}
	if v.Qualified {
		return fmt.Sprintf("%s qualified  %q: %s", task.Short(v.Commit), subj, strings.Join(v.Tests, ", "))
	}
	return fmt.Sprintf("%s skipped    %q: %s", task.Short(v.Commit), subj, v.Reason)
}

type skipped struct{ kind, reason string }

func skipf(kind, format string, args ...any) *skipped {
	return &skipped{kind: kind, reason: kind + ": " + fmt.Sprintf(format, args...)}
}

// classify decides from a commit's diff alone whether its tests are worth
// running; nil means they are.
func classify(c commit, maxLines int) *skipped {
	if c.parent == "" {
		return skipf(SkipRoot, "the first commit has no old code to compare with")
	}
	var code, tests, lines int
	for _, f := range c.files {
		switch {
		case isTestFile(f.path):
			if strings.HasSuffix(f.path, "_test.go") {
				tests++
			}
		case isCode(f.path):
			code++
			lines += f.added + f.removed
		default:
			lines += f.added + f.removed
		}
	}
	switch {
	case code == 0 && tests == 0:
		return skipf(SkipNoGo, "no Go file changed")
	case tests == 0:
		return skipf(SkipCodeOnly, "code changed without a test")
	case code == 0:
		return skipf(SkipTestOnly, "tests changed without code")
	case lines > maxLines:
		return skipf(SkipTooLarge, "%d changed non-test lines (limit %d)", lines, maxLines)
	}
	return nil
}

// firstParentLog lists the first-parent history from head back to since
// (a revision, or else a date), newest first, with each commit's files as
// changed against its first parent.
func firstParentLog(ctx context.Context, r gitrepo.Repo, head, since string) ([]commit, error) {
	args := []string{"log", "--first-parent", "--diff-merges=first-parent", "--no-renames", "--numstat", "--format=%x00%H %P%x09%s%x1f%b%x1e"}
	rng := head
	if since != "" {
		if sha, err := r.Resolve(ctx, since); err == nil {
			rng = sha + ".." + head
		} else {
			if err := gitrepo.CheckRevision(since); err != nil {
				return nil, fmt.Errorf("--since %q: %w", since, err)
			}
			args = append(args, "--since="+since)
		}
	}
	args = append(args, rng, "--")
	out, err := r.Git(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("list the history: %w", err)
	}
	var cs []commit
	for _, rec := range strings.Split(out, "\x00") {
		rec = strings.TrimLeft(rec, "\n")
		if rec == "" {
			continue
		}
		msg, stat, _ := strings.Cut(rec, "\x1e")
		head, text, _ := strings.Cut(msg, "\t")
		subject, body, _ := strings.Cut(text, "\x1f")
		shas := strings.Fields(head)
		if len(shas) == 0 {
			continue
		}
		if len(shas) > 2 {
			// A merge's subject names the branch; its body, the change.
			if title := firstLine(body); title != "(no output)" {
				subject = title + " (" + subject + ")"
			}
		}
		c := commit{sha: shas[0], subject: subject}
		lines := strings.Split(stat, "\n")
		if len(shas) > 1 {
			c.parent = shas[1]
		}
		for _, l := range lines {
			f := strings.SplitN(l, "\t", 3)
			if len(f) != 3 {
				continue
			}
			a, _ := strconv.Atoi(f[0]) // "-" for binary files: 0
			d, _ := strconv.Atoi(f[1])
			c.files = append(c.files, fileStat{path: f[2], added: a, removed: d})
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// networkRE recognises a failure caused by reaching for the network.
var networkRE = regexp.MustCompile(`\bdial (tcp|udp)|\blookup \S+( on \S+)?: |no such host|network is unreachable|i/o timeout`)

// examine runs a candidate's tests with the fix and without it.
func examine(ctx context.Context, o MineOptions, ws *workspace.Workspace, c commit, repo string) (Task, *skipped, error) {
	r := ws.Repo
	o.Progress.Step(task.Short(c.sha) + " with the fix")
	if err := r.Checkout(ctx, c.sha); err != nil {
		return Task{}, nil, err
	}
	mod, err := testrun.Module(ws.Dir)
	if err != nil {
		return Task{}, skipf(SkipBuild, "no go.mod at the module root: %v", err), nil
	}
	var testFiles, codeFiles []string
	for _, f := range c.files {
		if isTestFile(f.path) {
			testFiles = append(testFiles, f.path)
		} else {
			codeFiles = append(codeFiles, f.path)
		}
	}
	ids, err := testFuncs(ws.Dir, mod, testFiles)
	if err != nil {
		return Task{}, nil, err
	}
	if len(ids) == 0 {
		return Task{}, skipf(SkipNoTests, "the changed test files define no test function"), nil
	}
	withFix, err := runs(ctx, o, ws.Dir, ids)
	if err != nil {
		return Task{}, nil, err
	}
	if len(withFix.Build) > 0 {
		return Task{}, skipf(SkipBuild, "%s", firstLine(withFix.Build[0].Message, withFix.Build[0].Output)), nil
	}
	if networkRE.MatchString(failureText(withFix)) {
		return Task{}, skipf(SkipNetwork, "a test reaches for the network with the fix"), nil
	}
	var passing, flakyFix []string
	for _, id := range ids {
		runs := withFix.Runs[id]
		switch {
		case runs.Pass == o.Runs && runs.Fail == 0:
			passing = append(passing, id)
		case runs.Pass > 0 && runs.Fail > 0:
			flakyFix = append(flakyFix, fmt.Sprintf("%s failed %d of %d runs", id, runs.Fail, runs.Pass+runs.Fail))
		}
	}
	if len(passing) == 0 {
		if len(flakyFix) > 0 {
			return Task{}, skipf(SkipFlaky, "with the fix %s", strings.Join(flakyFix, "; ")), nil
		}
		return Task{}, skipf(SkipFailFix, "no test of the changed test files passes with the fix"), nil
	}

	o.Progress.Step(task.Short(c.sha) + " without the fix")
	if err := r.Checkout(ctx, c.parent); err != nil {
		return Task{}, nil, err
	}
	if err := takeFiles(ctx, r, c.sha, testFiles); err != nil {
		return Task{}, nil, err
	}
	without, err := runs(ctx, o, ws.Dir, passing)
	if err != nil {
		return Task{}, nil, err
	}
	if networkRE.MatchString(failureText(without)) {
		return Task{}, skipf(SkipNetwork, "a test reaches for the network without the fix"), nil
	}
	if len(without.Build) > 0 {
		return Task{}, skipf(SkipTestsBuild, "the fix's tests do not build against the old code: %s", firstLine(without.Build[0].Message, without.Build[0].Output)), nil
	}
	var failing, flaky []string
	for _, id := range passing {
		runs := without.Runs[id]
		switch {
		case runs.Fail == o.Runs && runs.Pass == 0:
			failing = append(failing, id)
		case runs.Fail > 0:
			flaky = append(flaky, fmt.Sprintf("%s failed %d of %d runs", id, runs.Fail, runs.Pass+runs.Fail))
		}
	}
	if len(failing) == 0 {
		if len(flaky) > 0 {
			return Task{}, skipf(SkipFlaky, "without the fix %s", strings.Join(flaky, "; ")), nil
		}
		return Task{}, skipf(SkipPassOld, "the fix's tests pass with the old code too"), nil
	}
	if len(flaky) > 0 {
		o.Log.Info("flaky tests left out of a task", zap.String("commit", c.sha), zap.Strings("flaky", flaky))
	}

	// The other tests of the failing tests' packages, with the fix: those
	// that fail there are no patch's fault.
	o.Progress.Step(task.Short(c.sha) + " the packages' other tests")
	if err := r.Checkout(ctx, c.sha); err != nil {
		return Task{}, nil, err
	}
	var pkgs, dirs []string
	for _, id := range failing {
		t, err := testrun.Resolve(ws.Dir, id)
		if err != nil {
			return Task{}, nil, err
		}
		if !slices.Contains(pkgs, t.ImportPath) {
			pkgs, dirs = append(pkgs, t.ImportPath), append(dirs, t.Dir)
		}
	}
	all, err := o.Runner.RunPackages(ctx, ws.Dir, dirs)
	if err != nil {
		return Task{}, nil, err
	}
	var known []string
	for _, f := range all.Failed {
		if id := f.ID(); !slices.Contains(failing, id) && !slices.Contains(known, id) {
			known = append(known, id)
		}
	}

	testPatch, err := r.Git(ctx, append([]string{"diff", "--binary", "--no-ext-diff", "--no-textconv", "--no-renames", c.parent, c.sha, "--"}, testFiles...)...)
	if err != nil {
		return Task{}, nil, err
	}
	golden, err := r.Git(ctx, append([]string{"diff", "--binary", "--no-ext-diff", "--no-textconv", "--no-renames", c.parent, c.sha, "--"}, codeFiles...)...)
	if err != nil {
		return Task{}, nil, err
	}
	lines := 0
	for _, f := range c.files {
		if !isTestFile(f.path) {
			lines += f.added + f.removed
		}
	}
	return Task{
		ID: taskID(repo, c.sha), Repo: repo, Base: c.parent, TestPatch: testPatch, Tests: failing,
		Packages: pkgs, KnownFailures: known, Golden: golden, LinesChanged: lines, Fix: c.sha, Subject: c.subject,
	}, nil, nil
}

// runs runs the tests o.Runs times, each in a go test process of its own as
// CI runs them (a test that leaves global state behind is not flaky for
// failing a second run in the same process), and adds up their outcomes.
// It stops at the first run that does not build.
func runs(ctx context.Context, o MineOptions, dir string, ids []string) (testrun.Outcome, error) {
	var all testrun.Outcome
	all.Runs = map[string]report.Runs{}
	for i := 0; i < o.Runs; i++ {
		out, err := o.Runner.Run(ctx, dir, ids, 1)
		if err != nil {
			return all, err
		}
		all.Failed = append(all.Failed, out.Failed...)
		all.Build = append(all.Build, out.Build...)
		all.Others = append(all.Others, out.Others...)
		for id, r := range out.Runs {
			t := all.Runs[id]
			t.Pass, t.Fail, t.Skip = t.Pass+r.Pass, t.Fail+r.Fail, t.Skip+r.Skip
			all.Runs[id] = t
		}
		if len(out.Build) > 0 {
			break
		}
	}
	return all, nil
}

// taskID is the repository's directory name and the fix's short hash.
func taskID(repo, sha string) string {
	name := filepath.Base(repo)
	if name == "." || name == "/" || name == "repo" || name == ".git" {
		name = filepath.Base(filepath.Dir(repo))
	}
	return strings.TrimSuffix(name, ".git") + "-" + task.Short(sha)
}

// takeFiles makes paths in the work tree as they are at rev: written, or
// removed where rev has no such file.
func takeFiles(ctx context.Context, r gitrepo.Repo, rev string, paths []string) error {
	out, err := r.Git(ctx, append([]string{"ls-tree", "-r", "--name-only", rev, "--"}, paths...)...)
	if err != nil {
		return err
	}
	present := strings.Fields(out)
	var take []string
	for _, p := range paths {
		if slices.Contains(present, p) {
			take = append(take, p)
		} else if err := os.Remove(filepath.Join(r.Dir, filepath.FromSlash(p))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if len(take) == 0 {
		return nil
	}
	_, err = r.Git(ctx, append([]string{"checkout", rev, "--"}, take...)...)
	return err
}

// testFuncs lists the top-level tests (func TestX(t *testing.T)) that the
// Go test files among paths define, as import/path.TestX.
func testFuncs(root, mod string, paths []string) ([]string, error) {
	var ids []string
	fset := token.NewFileSet()
	for _, p := range paths {
		if !strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(p)), nil, parser.SkipObjectResolution)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted by the fix
		}
		if err != nil {
			continue // the build will say
		}
		imp := mod
		if d := path.Dir(p); d != "." {
			imp = mod + "/" + d
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !isTestName(fn.Name.Name) || fn.Type.Params.NumFields() != 1 {
				continue
			}
			if id := imp + "." + fn.Name.Name; !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids, nil
}

func isTestName(n string) bool {
	if !strings.HasPrefix(n, "Test") || n == "TestMain" {
		return false
	}
	rest := n[len("Test"):]
	return rest == "" || !(rest[0] >= 'a' && rest[0] <= 'z')
}

// failureText is every failure's output in a run.
func failureText(o testrun.Outcome) string {
	var b strings.Builder
	for _, fs := range [][]task.Failure{o.Failed, o.Build, o.Others} {
		for _, f := range fs {
			b.WriteString(f.Message)
			b.WriteString("\n")
			b.WriteString(f.Output)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// firstLine is the first non-empty line of the first non-empty text.
func firstLine(texts ...string) string {
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				if r := []rune(l); len(r) > 200 {
					l = string(r[:200]) + "…"
				}
				return l
			}
		}
	}
	return "(no output)"
}

type nopProgress struct{}

func (nopProgress) Total(int)         {}
func (nopProgress) Step(string)       {}
func (nopProgress) Done(string, bool) {}
