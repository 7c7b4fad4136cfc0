package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// ErrCannotBisect wraps every reason a bisection cannot name the commit that
// broke the tests, as opposed to an error of git or of the machine: the
// tests pass at bad, already fail at good, no good commit was found, only
// commits that cannot be tested were left, the range only shows flakes, or
// the run budget ran out below the confidence asked for. A bisection
// returned with it holds what was learned.
var ErrCannotBisect = errors.New("cannot bisect")

// ErrFailsAtGood wraps, beside ErrCannotBisect, a bisection whose given
// good commit fails the tests too: a commit the caller (CI) saw green is
// red here, so the environment the tests ran in differs from the caller's
// (a time zone, a variable, an option the tests need), and no commit of
// the range can be blamed. It is not returned when no good was given and
// the probed start failed (the root commit is tried then).
var ErrFailsAtGood = errors.New("tests already fail at good")

// DefaultProbeLimit is how far back, in first-parent commits, Bisect looks
// for a good commit when it is given none, before it tries the root commit.
const DefaultProbeLimit = 64

// Runner runs tests in a checkout: count runs of each of ids, canonical
// test IDs (a language driver does).
type Runner interface {
	Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error)
}

// RunCache keeps the runs of each test at each commit across searches;
// store.Store satisfies it.
type RunCache interface {
	CommitRuns(ctx context.Context, testID string) (map[string]task.CommitRuns, error)
	AddCommitRuns(ctx context.Context, testID, commit string, runs task.CommitRuns) error
}

// Bisector finds the commit that broke some tests.
type Bisector struct {
	// Runner runs the tests: Lang when Runner is nil.
	Runner Runner
	// Lang names the tests and sets a commit's dependencies up before its
	// tests run there: the repository's language driver. Without one the
	// search is an error wrapping lang.ErrNoDriver.
	Lang Language
	// MaxSteps bounds the test runs (the verification at bad included); 0
	// bounds them by the range's length (several times what plain
	// bisection would take).
	MaxSteps int
	// ProbeLimit is DefaultProbeLimit when 0.
	ProbeLimit int
	// Confidence to reach before naming a culprit; DefaultConfidence when
	// 0.
	Confidence float64
	// Parallel is how many commits may be tested at once, each in its own
	// worktree; 1 when 0.
	Parallel int
	// WorkDir is where the extra worktrees of parallel runs are made (the
	// workspaces' parent); "" for the system's temporary directory.
	WorkDir string
	// Cache, when set, supplies the runs of earlier searches and keeps
	// this one's.
	Cache RunCache
	// FlakeRate is the tests' flakiness from their history, when known.
	FlakeRate float64
	// Evidence is the search's NoisySearch.Evidence: what a culprit needs
	// against tests that fail half of their runs at every commit (0: none
	// beyond the confidence).
	Evidence float64
	// Reproduction holds the results of the re-runs the caller made at bad
	// (one a run and test) for BisectFailing: they are the search's known
	// results there when the cache has none. Without it the search knows
	// one failure a test at bad.
	Reproduction []Result
	Log          *zap.Logger
}

// Bisect finds, in the git checkout at repoDir, the first commit on bad's
// first-parent history where tests fail. It checks out commits in repoDir
// (discarding local changes) and leaves it at bad.
//
// Every run is noisy evidence (see NoisySearch): a failure before the
// culprit may be a flake, so a single transient failure at good, or in the
// middle of the range, does not decide anything; the search runs again
// where evidence is weak and names a culprit only at Confidence.
//
// It first checks that the tests fail at bad (unless the caller just saw
// them fail there). With no good given, the range starts ProbeLimit
// first-parent commits back from bad (or at the root commit), trusted less
// than a good commit CI saw green; if the tests fail there too, the root
// commit is tried.
//
// A commit where the package does not build is skipped, like `git bisect
// skip`. A test that does not exist at a commit passes there, as a runner
// asked for a test that is not there does; when the culprit is the commit that added the test, the
// result says so (AddedTest: failing since it was added). If only commits
// that cannot be tested separate the last good from the first bad commit,
// the result wraps ErrCannotBisect and its error names the candidates. A
// test that times out counts as failing: a hang is a regression too.
//
// Tests may be named as reports or people name them: the language resolves
// them at bad. In the
// result Good is the blamed commit's parent, Bad is bad, Steps counts the
// runs made and CachedRuns those reused from Cache.
func (b Bisector) Bisect(ctx context.Context, repoDir, good, bad string, tests []string) (task.Bisection, error) {
	return b.bisect(ctx, gitrepo.Repo{Dir: repoDir}, good, bad, tests, false)
}

// BisectFailing is Bisect on a repository (a checkout's, whose git
// directory is kept apart) when the caller has just seen the tests fail at
// bad: it does not verify that they fail there.
func (b Bisector) BisectFailing(ctx context.Context, repo gitrepo.Repo, good, bad string, tests []string) (task.Bisection, error) {
	return b.bisect(ctx, repo, good, bad, tests, true)
}

// bisect is Bisect; badKnown skips the verification at bad when the caller
// has just seen the tests fail there.
func (b Bisector) bisect(ctx context.Context, repo gitrepo.Repo, good, bad string, tests []string, badKnown bool) (res task.Bisection, err error) {
	if b.Lang == nil {
		return res, noLanguage("bisect")
	}
	if b.Runner == nil {
		r, ok := b.Lang.(Runner)
		if !ok {
			return res, fmt.Errorf("bisect: the language driver runs no tests and no runner is given: %w", lang.ErrNoDriver)
		}
		b.Runner = r
	}
	log := b.Log
	if log == nil {
		log = zap.NewNop()
	}
	badSHA, err := repo.Resolve(ctx, bad)
	if err != nil {
		return res, fmt.Errorf("bisect: bad commit: %w", err)
	}
	res.Bad = badSHA
	if err := repo.Checkout(ctx, badSHA); err != nil {
		return res, fmt.Errorf("bisect: %w", err)
	}
	ids, err := Canonical(b.Lang, repo.Dir, tests)
	if err != nil {
		return res, fmt.Errorf("bisect: tests at bad %s: %w", task.Short(badSHA), err)
	}
	log = log.With(zap.Strings("tests", ids))
	pool, err := newWorktrees(ctx, repo, max(1, b.Parallel), b.WorkDir)
	if err != nil {
		return res, fmt.Errorf("bisect: %w", err)
	}
	pr := &gitProber{runner: b.Runner, lang: b.Lang, tests: ids, slots: pool.slots, cache: b.Cache, log: log}
	steps := 0
	if err := pr.load(ctx); err != nil {
		pool.close(context.WithoutCancel(ctx))
		return res, err
	}
	defer func() {
		res.Steps = steps
		pool.close(context.WithoutCancel(ctx))
		// Leave the checkout where the caller had it.
		if cerr := repo.Checkout(context.WithoutCancel(ctx), badSHA); cerr != nil && err == nil {
			err = fmt.Errorf("bisect: %w", cerr)
		}
	}()
	if !badKnown {
		steps++
		if err := verifyBad(ctx, pr, badSHA); err != nil {
			return res, err
		}
	}
	s := NoisySearch{Confidence: b.Confidence, Parallel: b.Parallel, FlakeRate: b.FlakeRate, Evidence: b.Evidence}
	goodSHA, probed, err := b.rangeStart(ctx, repo, good, badSHA)
	if err != nil {
		return res, err
	}
	if probed {
		// A commit chosen by distance, not one CI saw green.
		s.GoodPrior = 0.2
	}
	for {
		if b.MaxSteps > 0 {
			s.MaxRuns = b.MaxSteps - steps
			if s.MaxRuns <= 0 {
				return res, fmt.Errorf("bisect: gave up after %d steps: %w", steps, ErrCannotBisect)
			}
		}
		res.Good = goodSHA
		f, path, fromCache, err := b.search(ctx, s, repo, pr, goodSHA, badSHA, badKnown)
		steps += f.Runs
		res.CachedRuns = fromCache
		res.Confidence = round3(f.Confidence)
		res.FlakeRate = round3(f.FlakeRate)
		res.Evidence = math.Round(f.Evidence*10) / 10
		res.Finding = f.Kind
		if err != nil && !errors.Is(err, errNoProgress) {
			return res, err
		}
		log.Debug("noisy search", zap.String("finding", f.Kind), zap.Float64("confidence", f.Confidence), zap.Int("runs", f.Runs), zap.Int("cached", f.Known))
		switch f.Kind {
		case FindingCulprit:
			err := b.blame(ctx, repo, pr, &res, f, path)
			log.Debug("bisected", zap.String("blame", res.Blame), zap.Int("steps", steps), zap.Bool("added_test", res.AddedTest))
			return res, err
		case FindingFailsGood:
			if !probed {
				return res, fmt.Errorf("bisect: %w %s (%.1f%% sure; flake rate about %.0f%%): %w", ErrFailsAtGood, task.Short(goodSHA), 100*f.Confidence, 100*f.FlakeRate, ErrCannotBisect)
			}
			// The root is the last resort: it may fail as well.
			if goodSHA, err = b.fromRoot(ctx, repo, goodSHA, badSHA); err != nil {
				return res, err
			}
			probed = false
			continue
		}
		return res, b.noCulprit(f, path, steps, err)
	}
}

// verifyBad runs the tests once at bad: they must fail there.
func verifyBad(ctx context.Context, pr *gitProber, badSHA string) error {
	pr.path = []string{badSHA}
	rs, err := pr.Probe(ctx, 0)
	if err != nil {
		return err
	}
	switch summarize(rs) {
	case ResultPass:
		return fmt.Errorf("bisect: tests pass at bad %s, nothing to bisect: %w", task.Short(badSHA), ErrCannotBisect)
	case ResultSkip:
		return fmt.Errorf("bisect: tests do not run at bad %s: %w", task.Short(badSHA), ErrCannotBisect)
	case ResultMissing:
		return fmt.Errorf("bisect: tests do not exist at bad %s: %w", task.Short(badSHA), ErrCannotBisect)
	}
	return nil
}

// rangeStart is the search's good end: good resolved, an ancestor of bad;
// or, when no good is given, the commit ProbeLimit back (probed).
func (b Bisector) rangeStart(ctx context.Context, repo gitrepo.Repo, good, badSHA string) (goodSHA string, probed bool, err error) {
	if good == "" {
		goodSHA, err = b.probeStart(ctx, repo, badSHA)
		return goodSHA, true, err
	}
	goodSHA, err = repo.Resolve(ctx, good)
	if err != nil {
		return "", false, fmt.Errorf("bisect: good commit: %w", err)
	}
	if goodSHA == badSHA {
		return "", false, fmt.Errorf("bisect: good and bad are the same commit %s: %w", task.Short(badSHA), ErrCannotBisect)
	}
	if !repo.IsAncestor(ctx, goodSHA, badSHA) {
		return "", false, fmt.Errorf("bisect: good %s is not an ancestor of bad %s: %w", task.Short(goodSHA), task.Short(badSHA), ErrCannotBisect)
	}
	return goodSHA, false, nil
}

// fromRoot is the root commit, the next start when the tests fail at the
// probed start too; an error when the root is where the search was.
func (b Bisector) fromRoot(ctx context.Context, repo gitrepo.Repo, goodSHA, badSHA string) (string, error) {
	root, err := rootCommit(ctx, repo, badSHA)
	if err != nil {
		return "", err
	}
	if root == goodSHA || root == badSHA {
		return "", fmt.Errorf("bisect: no commit where the tests pass, %d commits back from %s or at the root commit: %w", b.probeLimit(), task.Short(badSHA), ErrCannotBisect)
	}
	return root, nil
}

// blame records the culprit the search found in res: the commit, its
// subject and author, and whether it added the tests. Several candidates
// (the others could not be tested) name none.
func (b Bisector) blame(ctx context.Context, repo gitrepo.Repo, pr *gitProber, res *task.Bisection, f Finding, path []string) error {
	if len(f.Candidates) > 1 {
		res.Good = path[f.Candidates[0]-1]
		return fmt.Errorf("bisect: the first failing commit is one of %s (the others cannot be tested): %w", shorts(pick(path, f.Candidates)), ErrCannotBisect)
	}
	res.Good, res.Blame = path[f.Culprit-1], path[f.Culprit]
	c, err := repo.Show(ctx, res.Blame)
	if err != nil {
		return fmt.Errorf("bisect: %w", err)
	}
	res.Subject, res.Author = c.Subject, c.Author
	res.AddedTest = addedTest(ctx, pr, res.Good, f.Results[f.Culprit-1])
	return nil
}

// noCulprit is the error of a search that ended without one: only flakes,
// only commits that cannot be tested, or out of runs.
func (b Bisector) noCulprit(f Finding, path []string, steps int, err error) error {
	if f.Kind == FindingOnlyFlakes {
		return fmt.Errorf("bisect: no culprit: the range only shows flakes (%.1f%% sure; flake rate about %.0f%%): %w", 100*f.Confidence, 100*f.FlakeRate, ErrCannotBisect)
	}
	best := "only flakes"
	if f.Best >= 0 {
		best = task.Short(path[f.Best])
	}
	if errors.Is(err, errNoProgress) {
		return fmt.Errorf("bisect: only commits that cannot be tested are left; most likely %s (%.1f%%): %w", best, 100*f.Confidence, ErrCannotBisect)
	}
	return fmt.Errorf("bisect: gave up after %d steps below %.1f%% confidence; most likely %s (%.1f%%): %w", steps, 100*confidence(b.Confidence), best, 100*f.Confidence, ErrCannotBisect)
}

// search runs one noisy search from goodSHA to badSHA, with what the cache
// and the caller already know.
func (b Bisector) search(ctx context.Context, s NoisySearch, repo gitrepo.Repo, pr *gitProber, goodSHA, badSHA string, badKnown bool) (Finding, []string, int, error) {
	rest, err := repo.Path(ctx, goodSHA, badSHA)
	if err != nil {
		return Finding{}, nil, 0, fmt.Errorf("bisect: %w", err)
	}
	if len(rest) == 0 || rest[len(rest)-1] != badSHA {
		return Finding{}, nil, 0, fmt.Errorf("bisect: good %s is not on the first-parent history of %s: %w", task.Short(goodSHA), task.Short(badSHA), ErrCannotBisect)
	}
	path := append([]string{goodSHA}, rest...)
	pr.mu.Lock()
	pr.path = path
	pr.mu.Unlock()
	known, fromCache := pr.known()
	n := len(path) - 1
	if badKnown && len(known[n]) == 0 {
		known[n] = append(known[n], b.Reproduction...)
		if len(known[n]) == 0 {
			for range pr.tests {
				known[n] = append(known[n], ResultFail)
			}
		}
	}
	f, err := s.Search(ctx, n, known, pr)
	return f, path, fromCache, err
}

func (b Bisector) probeLimit() int {
	if b.ProbeLimit <= 0 {
		return DefaultProbeLimit
	}
	return b.ProbeLimit
}

// probeStart is the range's start when no good commit is given: ProbeLimit
// first-parent commits back from bad, or the root when history is shorter.
func (b Bisector) probeStart(ctx context.Context, repo gitrepo.Repo, badSHA string) (string, error) {
	if sha, err := repo.Resolve(ctx, fmt.Sprintf("%s~%d", badSHA, b.probeLimit())); err == nil {
		return sha, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	root, err := rootCommit(ctx, repo, badSHA)
	if err != nil {
		return "", err
	}
	if root == badSHA {
		return "", fmt.Errorf("bisect: %s is the root commit, there is nothing before it: %w", task.Short(badSHA), ErrCannotBisect)
	}
	return root, nil
}

func rootCommit(ctx context.Context, repo gitrepo.Repo, sha string) (string, error) {
	out, err := repo.Git(ctx, "rev-list", "--first-parent", "--max-parents=0", sha)
	if err != nil {
		return "", fmt.Errorf("bisect: root commit: %w", err)
	}
	root, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return root, nil
}

// addedTest says whether the tests did not exist at parent, the blamed
// commit's parent: a result there says so (missing, or one that ran), else
// the language tells from a checkout of parent, running nothing (see
// TestDeclarer). A checkout that fails says nothing: not added.
func addedTest(ctx context.Context, pr *gitProber, parent string, seen []Result) bool {
	for _, r := range seen {
		switch r {
		case ResultMissing:
			return true
		case ResultPass, ResultFail:
			return false
		}
	}
	declared, err := pr.declared(ctx, parent)
	if err != nil {
		pr.log.Info("bisect: cannot tell whether the tests were there before the culprit", zap.String("commit", parent), zap.Error(err))
		return false
	}
	return !declared
}

func confidence(c float64) float64 {
	if c <= 0 || c >= 1 {
		return DefaultConfidence
	}
	return c
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func pick(path []string, idx []int) []string {
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = path[i]
	}
	return out
}

func shorts(shas []string) string {
	out := make([]string, len(shas))
	for i, s := range shas {
		out[i] = task.Short(s)
	}
	return strings.Join(out, ", ")
}
