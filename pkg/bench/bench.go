package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/worker"
)

// Repairer runs the repair pipeline on a task: the agent, the gates and the
// judge, and a publisher that publishes nothing.
type Repairer interface {
	Repair(ctx context.Context, t task.Task) (worker.Outcome, error)
}

// Runner replays tasks.
type Runner struct {
	Repairer Repairer
	// Policy names the policy, for the report.
	Policy string
	// Languages chooses each task's driver, once, from its checkout; its
	// tests run through it (the task, and the scoring of each patch). It
	// is required: no language is assumed.
	Languages Languages
	// K is how many independent episodes each task gets (SR@k); Jobs how
	// many tasks run at once.
	K, Jobs int
	// Results is the results file (JSON lines, one task a line): a task
	// already there is not run again. Trajectories go under Results + ".d".
	Results string
	// WorkDir holds the tasks' repositories and checkouts ("": the
	// system's temporary directory).
	WorkDir string
	// Bisector finds the blame of a task that names a good commit instead
	// (Task.Good), as triage would; required only by such tasks.
	Bisector Bisector
	Progress Progress
	Log      *zap.Logger
}

// Result is what one task's replay did: a line of the results file.
type Result struct {
	ID           string   `json:"id"`
	Subject      string   `json:"subject,omitempty"`
	Fix          string   `json:"fix,omitempty"`
	Tests        []string `json:"tests"`
	LinesChanged int      `json:"lines_changed,omitempty"`
	Policy       string   `json:"policy"`
	// Error is set when the task could not be replayed at all (its
	// repository, its patch of tests, its tests not failing); such a task
	// runs again on the next bench.
	Error   string   `json:"error,omitempty"`
	Samples []Sample `json:"samples,omitempty"`
	// Solved1: the first episode solved it; SolvedK: one of the K did.
	Solved1 bool `json:"solved_at_1"`
	SolvedK bool `json:"solved_at_k"`
	// RevertOffered: an episode found no fix but that undoing the culprit
	// passes, and the revert, scored as a patch would be, solves the task:
	// an answer an on-call engineer can act on, counted apart from fixes.
	RevertOffered bool `json:"revert_offered,omitempty"`
	// Bisected is the blame bench found from the task's good commit.
	Bisected string  `json:"bisected,omitempty"`
	Seconds  float64 `json:"seconds"`
}

// Sample is one episode of a task, with its gates' verdicts and its score.
type Sample struct {
	N int `json:"n"`
	// Published: every gate and the judge let it through (the judge may be
	// "not run" without a model), so the bot would have opened a pull
	// request.
	Published bool   `json:"published"`
	Status    string `json:"status"`
	Reason    string `json:"reason,omitempty"`
	Error     string `json:"error,omitempty"`
	// Gates is each gate's verdict, "name:verdict"; RejectedBy the gates
	// that failed the patch; Evidence each gate's own account (gates.go).
	Gates      []string `json:"gates,omitempty"`
	RejectedBy []string `json:"rejected_by,omitempty"`
	Evidence   Evidence `json:"gate_evidence,omitempty"`
	Steps      int      `json:"steps"`
	Stop       string   `json:"stop,omitempty"`
	Tried               // the candidate patches the episode tested
	Tokens     int      `json:"tokens"`
	Calls      int      `json:"calls"`
	CostUSD    float64  `json:"cost_usd"`
	Seconds    float64  `json:"seconds"`
	Patch      string   `json:"patch,omitempty"`
	// Solved is the independent score: the patch applied on a clean copy
	// makes the failing tests pass, keeps the packages' other tests
	// passing and changes no test file. Score says why not.
	Solved bool   `json:"solved"`
	Score  string `json:"score,omitempty"`
	// RevertPasses: the episode left no patch but said that undoing the
	// blame commit's change made the failing tests pass; RevertSolves: the
	// culprit's revert, scored as a patch, solves the task (Score says why
	// not).
	RevertPasses bool `json:"revert_passes,omitempty"`
	RevertSolves bool `json:"revert_solves,omitempty"`
	// Golden compares the patch with the person's fix: "same", "differs",
	// "no-patch" or "no-golden".
	Golden string `json:"golden"`
	// Trajectory is the episode's steps, relative to the results file's
	// directory.
	Trajectory string `json:"trajectory,omitempty"`
}

// Run replays every task that has no result yet, Jobs at a time, appending
// each result as it ends, and returns the results of all the tasks, earlier
// runs' included, in the tasks' order. It stops when ctx ends; the tasks in
// flight are replayed again by the next run.
func (r *Runner) Run(ctx context.Context, tasks []Task) ([]Result, error) {
	if r.K < 1 {
		r.K = 1
	}
	if r.Jobs < 1 {
		r.Jobs = 1
	}
	if r.Log == nil {
		r.Log = zap.NewNop()
	}
	if r.Progress == nil {
		r.Progress = nopProgress{}
	}
	done := map[string]Result{}
	if err := readLines(r.Results, func(b []byte) error {
		var res Result
		if err := json.Unmarshal(b, &res); err != nil {
			return err
		}
		if res.Error == "" {
			done[res.ID] = res
		} else {
			delete(done, res.ID)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read the results: %w", err)
	}
	var todo []Task
	for _, t := range tasks {
		if _, ok := done[t.ID]; !ok {
			todo = append(todo, t)
		}
	}
	r.Progress.Total(len(todo))

	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, r.Jobs)
		err error
	)
	for _, t := range todo {
		wg.Add(1)
		go func(t Task) {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			res := r.safeTask(ctx, t)
			if ctx.Err() != nil {
				return // cut short: replayed next time
			}
			mu.Lock()
			defer mu.Unlock()
			if werr := appendLine(r.Results, res); werr != nil && err == nil {
				err = werr
			}
			done[t.ID] = res
			r.Progress.Done(resultLine(res), true)
		}(t)
	}
	wg.Wait()
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(tasks))
	for _, t := range tasks {
		if res, ok := done[t.ID]; ok {
			out = append(out, res)
		}
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("bench interrupted (run it again to continue): %w", ctx.Err())
	}
	return out, nil
}

// safeTask is runTask with a panic turned into the task's error.
func (r *Runner) safeTask(ctx context.Context, t Task) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			r.Log.Error("bench task panicked", zap.String("task_id", t.ID), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			res = Result{ID: t.ID, Tests: t.Tests, Policy: r.Policy, Error: fmt.Sprintf("panic: %v", p)}
		}
	}()
	return r.runTask(ctx, t)
}

func resultLine(res Result) string {
	if res.Error != "" {
		return fmt.Sprintf("%s error: %s", res.ID, res.Error)
	}
	var parts []string
	for _, s := range res.Samples {
		p := fmt.Sprintf("#%d %s", s.N, sampleVerdict(s))
		parts = append(parts, p)
	}
	return fmt.Sprintf("%s %s", res.ID, strings.Join(parts, "; "))
}

// sampleVerdict is one episode in a few words.
func sampleVerdict(s Sample) string {
	switch {
	case s.Error != "":
		return "error"
	case s.Patch == "":
		return "no patch"
	}
	v := "unsolved"
	if s.Solved {
		v = "solved"
	}
	if s.Published {
		v += ", published"
	} else if len(s.RejectedBy) > 0 {
		v += ", rejected by " + strings.Join(s.RejectedBy, "+")
	} else {
		v += ", not published"
	}
	if s.Golden == "same" {
		v += ", as the golden fix"
	}
	return v
}

func (r *Runner) runTask(ctx context.Context, t Task) Result {
	started := time.Now()
	res := Result{ID: t.ID, Subject: t.Subject, Fix: t.Fix, Tests: t.Tests, LinesChanged: t.LinesChanged, Policy: r.Policy}
	log := r.Log.With(zap.String("task_id", t.ID), zap.String("repo", t.Repo))
	fail := func(err error) Result {
		res.Error = err.Error()
		res.Seconds = time.Since(started).Seconds()
		log.Warn("bench task could not be replayed", zap.Error(err))
		return res
	}
	r.Progress.Step(t.ID + ": preparing")
	prep, err := r.prepare(ctx, t)
	if prep.dir != "" {
		defer os.RemoveAll(prep.dir)
	}
	if err != nil {
		return fail(err)
	}
	if t.Good != "" {
		res.Bisected = prep.blame.Blame
	}
	trajDir := filepath.Join(r.Results+".d", safeName(t.ID))
	if err := os.MkdirAll(trajDir, 0o755); err != nil {
		return fail(err)
	}
	for n := 1; n <= r.K; n++ {
		if ctx.Err() != nil {
			return res
		}
		r.Progress.Step(fmt.Sprintf("%s: episode %d of %d", t.ID, n, r.K))
		tt := task.Task{
			ID: fmt.Sprintf("bench-%s-%d", safeName(t.ID), n), Repo: prep.repo, Commit: prep.commit,
			Fingerprint: "bench-" + safeName(t.ID), Status: task.StatusRunning, CreatedAt: time.Now().UTC(),
			Failures: prep.failures, Flakiness: task.Flakiness{Runs: 1, Failures: 1, Verdict: "reliable"},
			Bisection: prep.blame,
		}
		s := Sample{N: n}
		t0 := time.Now()
		o, err := r.Repairer.Repair(ctx, tt)
		s.Seconds = time.Since(t0).Seconds()
		if err != nil {
			s.Error = err.Error()
		}
		s.Status, s.Reason = string(o.Status), o.Reason
		s.Published = o.Status == task.StatusPublished
		s.takeGates(o.Gates)
		s.Steps, s.Stop, s.Tried = o.Steps, o.Agent.Stop, triedOf(o.Agent)
		if s.Steps == 0 {
			s.Steps = o.Agent.Steps
		}
		s.Tokens, s.Calls, s.CostUSD = o.Spend.Usage.Total(), o.Spend.Calls, o.Spend.CostUSD
		s.Patch = o.Agent.Patch
		if len(o.Trajectory) > 0 {
			name := fmt.Sprintf("episode-%d.jsonl", n)
			if err := os.WriteFile(filepath.Join(trajDir, name), o.Trajectory, 0o644); err == nil {
				s.Trajectory = filepath.ToSlash(filepath.Join(filepath.Base(r.Results)+".d", safeName(t.ID), name))
			}
		}
		s.Golden = compareGolden(s.Patch, t.Golden)
		if strings.TrimSpace(s.Patch) != "" {
			r.Progress.Step(fmt.Sprintf("%s: scoring episode %d", t.ID, n))
			s.Solved, s.Score, err = r.score(ctx, prep, t, s.Patch)
			if err != nil {
				if ctx.Err() != nil {
					return res
				}
				s.Score = "could not score: " + err.Error()
			}
		} else if o.Agent.RevertPasses {
			// No fix, but the agent found that undoing the culprit passes:
			// an answer for a revert, checked here as a fix would be.
			r.Progress.Step(fmt.Sprintf("%s: scoring episode %d's revert", t.ID, n))
			s.RevertPasses = true
			s.RevertSolves, s.Score, err = r.scoreRevert(ctx, prep, t)
			if err != nil {
				if ctx.Err() != nil {
					return res
				}
				s.Score = "could not score the revert: " + err.Error()
			}
		} else {
			s.Score = "no patch"
		}
		log.Info("bench episode", zap.Int("episode", n), zap.Bool("published", s.Published), zap.Bool("solved", s.Solved), zap.Int("steps", s.Steps))
		res.Samples = append(res.Samples, s)
		if n == 1 {
			res.Solved1 = s.Solved
		}
		res.SolvedK = res.SolvedK || s.Solved
		res.RevertOffered = res.RevertOffered || s.RevertSolves
	}
	res.Seconds = time.Since(started).Seconds()
	return res
}

// prepared is a task made ready: a repository holding only the history up
// to the task's commit (the fix is not in it), and how its tests fail.
type prepared struct {
	dir      string // removed after the task
	repo     string
	commit   string
	failures []task.Failure
	// pkgs are the packages whose tests must keep passing, as directories
	// relative to the module root.
	pkgs  []string
	blame task.Bisection
	// lang is the repository's driver.
	lang Language
}

// aloneFailing runs on its own each of the tests (canonical ids) that did
// not run in out, keeps the failures of those that fail, and returns the
// tests that still do not fail.
func (p *prepared) aloneFailing(ctx context.Context, dir string, tests []string, out testrun.Outcome) ([]string, error) {
	var still []string
	for _, id := range tests {
		if !slices.Contains(out.Missing, id) && !slices.Contains(out.NotRun, id) {
			still = append(still, id)
			continue
		}
		alone, err := p.lang.Run(ctx, dir, []string{id}, 1)
		if err != nil {
			return nil, fmt.Errorf("reproduce %s on its own: %w", id, err)
		}
		failed := append(slices.Clone(alone.Failed), alone.Build...)
		if !slices.ContainsFunc(failed, func(f task.Failure) bool { return under(f.ID(), id) }) && len(alone.Build) == 0 {
			still = append(still, id)
			continue
		}
		p.failures = append(p.failures, failed...)
	}
	return still, nil
}

// safeName keeps a task's ID usable as a file name.
func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ':' {
			return '_'
		}
		return r
	}, id)
}

// ErrNoTasks is returned for a tasks file with no task.
var ErrNoTasks = errors.New("no tasks")

// scoreRevert scores the revert of the task's culprit as a patch (score):
// the culprit's change undone on the task's commit, its test files left as
// they are.
func (r *Runner) scoreRevert(ctx context.Context, p prepared, t Task) (bool, string, error) {
	blame := p.blame.Blame
	if blame == "" {
		return false, "no culprit to revert", nil
	}
	repo := gitrepo.Repo{Dir: p.repo}
	diff, err := repo.Git(ctx, "diff", "--no-color", "--no-ext-diff", blame, blame+"^")
	if err != nil {
		return false, "", fmt.Errorf("revert of %s: %w", blame, err)
	}
	files, err := unidiff.Parse(diff)
	if err != nil {
		return false, "the culprit's revert does not parse: " + err.Error(), nil
	}
	var code []string
	for _, f := range files {
		name := f.NewPath
		if name == "" || name == "/dev/null" {
			name = f.OldPath
		}
		if !p.lang.IsTestFile(name) {
			code = append(code, name)
		}
	}
	if len(code) == 0 {
		return false, "the culprit changed only test files", nil
	}
	args := append([]string{"diff", "--no-color", "--no-ext-diff", blame, blame + "^", "--"}, code...)
	if diff, err = repo.Git(ctx, args...); err != nil {
		return false, "", fmt.Errorf("revert of %s: %w", blame, err)
	}
	ok, why, err := r.score(ctx, p, t, diff)
	if why != "" {
		why = "the culprit's revert: " + why
	}
	return ok, why, err
}
