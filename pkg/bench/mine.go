package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// Skip reasons: the first word of a skipped commit's reason, counted in the
// summary.
const (
	SkipRoot       = "root-commit"
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
	// SkipSetup: the language's setup of the fix's dependencies failed
	// (a Python requirement the package index does not serve).
	SkipSetup = "setup-failed"
	// SkipMissing: a git object the commit needs is not in the clone (a
	// shallow or damaged history); the reason names it.
	SkipMissing = "missing-object"
)

// Skips the environment caused, not the commit: the next run tries the
// commit again, and they do not count against MineOptions.Max.
const (
	// SkipModules: the setup step could not fetch the commit's module
	// versions (the module proxy unreachable, or refusing them), or the
	// build found one missing.
	SkipModules = "modules-unavailable"
	// SkipTimeout: a test run reached its time limit.
	SkipTimeout = "timed-out"
	// SkipEnv: a command could not run (the sandbox's or the host's
	// resources).
	SkipEnv = "environment"
)

// Retryable reports a skip kind caused by the environment.
func Retryable(kind string) bool {
	return kind == SkipModules || kind == SkipTimeout || kind == SkipEnv
}

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
	// Runs is how many times each test runs at least in each direction
	// (default 3). A test that passes (or fails) in every one of them runs
	// again until it has done so in SteadyRuns runs: only then is it taken
	// for steady.
	Runs int
	// FlakeRate and FlakeError state the error rate of that decision: a
	// test that fails in FlakeRate of its runs (default 0.5) is taken for
	// steady with a chance of at most FlakeError (default 0.001). They set
	// SteadyRuns.
	FlakeRate, FlakeError float64
	// Out is the tasks file; the state file is Out + ".state.jsonl".
	Out string
	// Languages chooses the repository's driver, once, from its checkout
	// at Head. It is required: no language is assumed.
	Languages Languages
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
	Examined bool `json:"examined,omitempty"`
	// Retry marks a skip the environment caused (Retryable): the commit
	// is not decided, and the next run tries it again.
	Retry bool `json:"retry,omitempty"`
	// Kind is what ClassifyChange tells of a qualified commit, or of one
	// whose tests needed new API.
	Kind    string   `json:"kind,omitempty"`
	Tests   []string `json:"tests,omitempty"`
	Seconds float64  `json:"seconds,omitempty"`
}

// MineSummary counts what a mine saw, this run and earlier ones.
type MineSummary struct {
	Commits   int            `json:"commits"`   // on the first-parent line in range
	Examined  int            `json:"examined"`  // run with tests
	Qualified int            `json:"qualified"` // tasks written
	Resumed   int            `json:"resumed"`   // decided by an earlier run
	Skipped   map[string]int `json:"skipped"`   // by reason kind
	// Retry counts this run's skips that the environment caused, by
	// reason kind: those commits are tried again by the next run.
	Retry map[string]int `json:"retry,omitempty"`
	// Kinds counts the tasks by ClassifyChange's kind.
	Kinds map[string]int `json:"kinds,omitempty"`
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
	sha, parent, subject, body string
	files                      []fileStat
	// missing names the git object that its diff could not be read
	// without, "" when it was read.
	missing string
}

type fileStat struct {
	path           string
	added, removed int
}

// Mine walks the first-parent history from Head back to Since, newest
// first, and appends a task to Out for every commit that qualifies. What it
// decides about each commit goes to the state file, so that a second run
// continues where the first stopped. It stops between test runs when ctx
// ends; the commit in flight is decided again by the next run.
func Mine(ctx context.Context, o MineOptions) (MineSummary, error) {
	o = o.withDefaults()
	sum := MineSummary{Skipped: map[string]int{}, Retry: map[string]int{}, Kinds: map[string]int{}}
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

	done, err := resume(o.Out, &sum)
	if err != nil {
		return sum, err
	}

	// The driver is chosen once, from the checkout at the head.
	ws, err := workspace.Open(ctx, abs, head, "")
	if err != nil {
		return sum, fmt.Errorf("mine: %w", err)
	}
	defer func() { _ = ws.Close() }()
	l, err := language(o.Languages, abs, ws.Dir)
	if err != nil {
		return sum, fmt.Errorf("mine %s: %w", abs, err)
	}

	// The bar counts the commits left to run tests on.
	left := 0
	for _, c := range history {
		if !done[c.sha] && classify(l, c, o.MaxLines) == nil {
			left++
		}
	}
	if o.Max > 0 {
		left = min(left, max(o.Max-sum.Examined, 0))
	}
	o.Progress.Total(left)

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
		v, err := decideCommit(ctx, o, l, ws, src, c)
		if err != nil {
			return sum, err
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

// withDefaults is o with its zero settings given their defaults.
func (o MineOptions) withDefaults() MineOptions {
	if o.Head == "" {
		o.Head = "HEAD"
	}
	if o.MaxLines <= 0 {
		o.MaxLines = 200
	}
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if o.FlakeRate <= 0 || o.FlakeRate >= 1 {
		o.FlakeRate = DefaultFlakeRate
	}
	if o.FlakeError <= 0 || o.FlakeError >= 1 {
		o.FlakeError = DefaultFlakeError
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Progress == nil {
		o.Progress = nopProgress{}
	}
	return o
}

// resume reads what earlier runs of the mine decided into sum: the commits
// done (those to try again apart), from the state file and the tasks
// file out.
func resume(out string, sum *MineSummary) (map[string]bool, error) {
	done := map[string]bool{}
	err := readLines(StatePath(out), func(line []byte) error {
		var v Verdict
		if err := json.Unmarshal(line, &v); err != nil {
			return err
		}
		if v.Retry || Retryable(v.Skip) {
			return nil // tried again
		}
		if !done[v.Commit] {
			done[v.Commit] = true
			sum.count(v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the mine's state: %w", err)
	}
	tasks, err := ReadTasksFile(out)
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		// A task written just before an interruption that kept its verdict
		// from the state file.
		if t.Fix != "" && !done[t.Fix] {
			done[t.Fix] = true
			sum.count(Verdict{Commit: t.Fix, Qualified: true, Examined: true, Kind: t.Kind})
		}
	}
	sum.Resumed = len(done)
	return done, nil
}

// decideCommit decides the commit c of the history: skipped (and why), or
// examined in the workspace ws, its task appended to the tasks file when
// it qualifies. An error stops the mine.
func decideCommit(ctx context.Context, o MineOptions, l Language, ws *workspace.Workspace, src gitrepo.Repo, c commit) (Verdict, error) {
	v := Verdict{Commit: c.sha, Subject: c.subject}
	skip := classify(l, c, o.MaxLines)
	if c.missing != "" {
		skip = skipf(SkipMissing, "git object %s is not in the clone", c.missing)
	}
	if rf, ok := l.(RootFile); ok && skip == nil {
		name, why := rf.RequiredRootFile()
		if _, err := src.Git(ctx, "cat-file", "-e", c.sha+":"+name); err != nil {
			if ctx.Err() != nil {
				return v, fmt.Errorf("mine interrupted (run it again to continue): %w", ctx.Err())
			}
			skip = skipf(SkipNoModule, "no %s at the repository's root (%s)", name, why)
		}
	}
	if skip != nil {
		v.Skip, v.Reason = skip.kind, skip.reason
	} else {
		started := time.Now()
		t, skip, err := examine(ctx, o, l, ws, c, src.Dir)
		if err != nil {
			if ctx.Err() != nil {
				return v, fmt.Errorf("mine interrupted (run it again to continue): %w", ctx.Err())
			}
			// A git object the commit needs is gone: this commit is
			// skipped, naming it, and the history goes on.
			if obj := missingObject(err); obj != "" {
				skip = skipf(SkipMissing, "git object %s is not in the clone", obj)
			} else {
				o.Log.Warn("a commit's tests could not run", zap.String("commit", c.sha), zap.String("error", cleanText(err.Error(), 2000)))
				skip = skipf(SkipEnv, "%s", cleanText(err.Error(), 300))
			}
		}
		v.Examined, v.Seconds = !Retryable(skip.kindOr()) && skip.kindOr() != SkipMissing, time.Since(started).Seconds()
		if skip != nil {
			v.Skip, v.Reason, v.Retry = skip.kind, skip.reason, Retryable(skip.kind)
			if skip.kind == SkipTestsBuild {
				v.Kind, _ = ClassifyChange(ChangeEvidence{Subject: c.subject, Body: c.body, NewAPI: true})
			}
		} else {
			t.Kind, t.KindWhy = ClassifyChange(ChangeEvidence{Subject: c.subject, Body: c.body, OldBehaviour: true})
			v.Kind = t.Kind
			v.Qualified, v.Tests = true, t.Tests
			if err := appendLine(o.Out, t); err != nil {
				return v, err
			}
		}
	}
	return v, nil
}

func (s *MineSummary) count(v Verdict) {
	if v.Retry {
		s.Retry[v.Skip]++
		return
	}
	if v.Examined {
		s.Examined++
	}
	if v.Qualified {
		s.Qualified++
		if v.Kind != "" {
			s.Kinds[v.Kind]++
		}
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

// kindOr is the skip's kind, "" for none.
func (s *skipped) kindOr() string {
	if s == nil {
		return ""
	}
	return s.kind
}

func skipf(kind, format string, args ...any) *skipped {
	return &skipped{kind: kind, reason: kind + ": " + fmt.Sprintf(format, args...)}
}

// classify decides from a commit's diff alone whether its tests are worth
// running; nil means they are.
func classify(l Language, c commit, maxLines int) *skipped {
	if c.parent == "" {
		return skipf(SkipRoot, "the first commit has no old code to compare with")
	}
	var code, tests, lines int
	for _, f := range c.files {
		switch {
		case l.IsTestFile(f.path):
			if isTestSource(l, f.path) {
				tests++
			}
		case isCode(l, f.path):
			code++
			lines += f.added + f.removed
		default:
			lines += f.added + f.removed
		}
	}
	switch {
	case code == 0 && tests == 0:
		return skipNoCode(l)
	case tests == 0:
		return skipf(SkipCodeOnly, "code changed without a test")
	case code == 0:
		return skipf(SkipTestOnly, "tests changed without code")
	case lines > maxLines:
		return skipf(SkipTooLarge, "%d changed non-test lines (limit %d)", lines, maxLines)
	}
	return nil
}

// networkRE recognises a failure caused by reaching for the network.
var networkRE = regexp.MustCompile(`\bdial (tcp|udp)|\blookup \S+( on \S+)?: |no such host|network is unreachable|i/o timeout`)

// taskID is the repository's directory name and the fix's short hash.
func taskID(repo, sha string) string {
	name := filepath.Base(repo)
	if name == "." || name == "/" || name == "repo" || name == ".git" {
		name = filepath.Base(filepath.Dir(repo))
	}
	return strings.TrimSuffix(name, ".git") + "-" + task.Short(sha)
}

type nopProgress struct{}

func (nopProgress) Total(int)         {}
func (nopProgress) Step(string)       {}
func (nopProgress) Done(string, bool) {}

// Report is a mine's last lines: what it looked at, what qualified (in
// o.Out), and why the rest did not.
func (s MineSummary) Report(o MineOptions, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d commits on the first-parent line; %d run with tests; %d qualified (tasks in %s, reasons in %s); took %s",
		s.Commits, s.Examined, s.Qualified, o.Out, StatePath(o.Out), took.Round(time.Second))
	if s.Resumed > 0 {
		fmt.Fprintf(&b, "; %d decided by an earlier run", s.Resumed)
	}
	if len(s.Kinds) > 0 {
		fmt.Fprintf(&b, "\ntasks by kind: %s %d; %s %d; %s %d", KindFix, s.Kinds[KindFix], KindFeature, s.Kinds[KindFeature], KindUnsure, s.Kinds[KindUnsure])
	}
	var kinds []string
	for k := range s.Skipped {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		return s.Skipped[kinds[i]] > s.Skipped[kinds[j]] || s.Skipped[kinds[i]] == s.Skipped[kinds[j]] && kinds[i] < kinds[j]
	})
	if len(kinds) > 0 {
		b.WriteString("\nskipped:")
		for i, k := range kinds {
			if i > 0 {
				b.WriteString(";")
			}
			fmt.Fprintf(&b, " %s %d", k, s.Skipped[k])
		}
	}
	retry := make([]string, 0, len(s.Retry))
	for k := range s.Retry {
		retry = append(retry, k)
	}
	sort.Strings(retry)
	if len(retry) > 0 {
		b.WriteString("\ntried again by the next run:")
		for i, k := range retry {
			if i > 0 {
				b.WriteString(";")
			}
			fmt.Fprintf(&b, " %s %d", k, s.Retry[k])
		}
	}
	return strings.TrimSuffix(b.String(), ";")
}
