package triage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// ErrCannotBisect wraps every reason a bisection cannot name the commit that
// broke the tests, as opposed to an error of git or of the machine: the
// tests pass at bad, already fail at good, no good commit was found, only
// commits that cannot be tested were left, or the step budget ran out. A
// bisection returned with it holds what was learned (the narrowed range).
var ErrCannotBisect = errors.New("cannot bisect")

// DefaultProbeLimit is how far back, in first-parent commits, Bisect looks
// for a good commit when it is given none, before it tries the root commit.
const DefaultProbeLimit = 64

// Bisector finds the commit that broke some tests.
type Bisector struct {
	Runner Runner
	// MaxSteps bounds the commits tested (verifications included); 0 means
	// no bound but the history's length.
	MaxSteps int
	// ProbeLimit is DefaultProbeLimit when 0.
	ProbeLimit int
	Log        *zap.Logger
}

// Bisect finds, in the git checkout at repoDir, the first commit on bad's
// first-parent history where tests fail, using a default runner. See
// Bisector.Bisect.
func Bisect(ctx context.Context, repoDir, good, bad string, tests []string) (task.Bisection, error) {
	return Bisector{}.Bisect(ctx, repoDir, good, bad, tests)
}

// state is what the tests did at one commit.
type state int

const (
	stateGood state = iota // every test ran and passed
	stateBad               // a test failed or timed out
	stateSkip              // the tests did not run: the package did not build, a test did not exist
)

func (s state) String() string { return [...]string{"good", "bad", "skip"}[s] }

// Bisect finds, in the git checkout at repoDir, the first commit on bad's
// first-parent history where tests fail. It checks out commits in repoDir
// (discarding local changes) and leaves it at bad.
//
// It first verifies that the tests fail at bad and pass at good. With no
// good given, it probes back from bad exponentially (bad~1, ~2, ~4, … up to
// ProbeLimit commits, then the root commit) for a commit where they pass;
// failing probes narrow the search. It then binary-searches the first-parent
// path between the two.
//
// A commit where the tests do not run — the package does not build, or the
// test does not exist yet — is neither good nor bad: like `git bisect skip`,
// the search tests the nearest untested neighbour instead. If only such
// commits remain between the last good and the first bad commit, the result
// wraps ErrCannotBisect and its Good and Blame-less range say where the
// break is. A test that times out counts as failing: a hang is a
// regression too.
//
// Tests may be bare names (TestParse/sub): they are resolved at bad. In the
// result Good is the last commit seen passing (the blamed commit's parent
// when the search is exact), Bad is bad, and Steps counts the commits
// tested, verifications included.
func (b Bisector) Bisect(ctx context.Context, repoDir, good, bad string, tests []string) (task.Bisection, error) {
	return b.bisect(ctx, repoDir, good, bad, tests, false)
}

type bisection struct {
	b      Bisector
	repo   gitrepo.Repo
	tests  []string
	steps  int
	states map[string]state
	log    *zap.Logger
}

// bisect is Bisect; badKnown skips the verification at bad when the caller
// has just seen the tests fail there.
func (b Bisector) bisect(ctx context.Context, repoDir, good, bad string, tests []string, badKnown bool) (res task.Bisection, err error) {
	if b.Runner == nil {
		b.Runner = testrun.Runner{}
	}
	log := b.Log
	if log == nil {
		log = zap.NewNop()
	}
	repo := gitrepo.Repo{Dir: repoDir}
	badSHA, err := repo.Resolve(ctx, bad)
	if err != nil {
		return res, fmt.Errorf("bisect: bad commit: %w", err)
	}
	res.Bad = badSHA
	if err := repo.Checkout(ctx, badSHA); err != nil {
		return res, fmt.Errorf("bisect: %w", err)
	}
	ids, err := Canonical(repoDir, tests)
	if err != nil {
		return res, fmt.Errorf("bisect: tests at bad %s: %w", task.Short(badSHA), err)
	}
	s := &bisection{b: b, repo: repo, tests: ids, states: map[string]state{}, log: log.With(zap.Strings("tests", ids))}
	defer func() {
		res.Steps = s.steps
		// Leave the checkout where the caller had it.
		if cerr := repo.Checkout(context.WithoutCancel(ctx), badSHA); cerr != nil && err == nil {
			err = fmt.Errorf("bisect: %w", cerr)
		}
	}()

	if badKnown {
		s.states[badSHA] = stateBad
	} else {
		st, err := s.test(ctx, badSHA)
		if err != nil {
			return res, err
		}
		switch st {
		case stateGood:
			return res, fmt.Errorf("bisect: tests pass at bad %s, nothing to bisect: %w", task.Short(badSHA), ErrCannotBisect)
		case stateSkip:
			return res, fmt.Errorf("bisect: tests do not run at bad %s: %w", task.Short(badSHA), ErrCannotBisect)
		}
	}

	var goodSHA, hiSHA string
	if good == "" {
		goodSHA, hiSHA, err = s.findGood(ctx, badSHA)
		if err != nil {
			return res, err
		}
	} else {
		goodSHA, err = repo.Resolve(ctx, good)
		if err != nil {
			return res, fmt.Errorf("bisect: good commit: %w", err)
		}
		if goodSHA == badSHA {
			return res, fmt.Errorf("bisect: good and bad are the same commit %s: %w", task.Short(badSHA), ErrCannotBisect)
		}
		if !repo.IsAncestor(ctx, goodSHA, badSHA) {
			return res, fmt.Errorf("bisect: good %s is not an ancestor of bad %s: %w", task.Short(goodSHA), task.Short(badSHA), ErrCannotBisect)
		}
		st, err := s.test(ctx, goodSHA)
		if err != nil {
			return res, err
		}
		switch st {
		case stateBad:
			return res, fmt.Errorf("bisect: tests already fail at good %s: %w", task.Short(goodSHA), ErrCannotBisect)
		case stateSkip:
			return res, fmt.Errorf("bisect: tests do not run at good %s: %w", task.Short(goodSHA), ErrCannotBisect)
		}
		hiSHA = badSHA
	}
	res.Good = goodSHA

	path, err := repo.Path(ctx, goodSHA, hiSHA)
	if err != nil {
		return res, fmt.Errorf("bisect: %w", err)
	}
	if len(path) == 0 || path[len(path)-1] != hiSHA {
		return res, fmt.Errorf("bisect: good %s is not on the first-parent history of %s: %w", task.Short(goodSHA), task.Short(hiSHA), ErrCannotBisect)
	}
	// path[lo] passes (lo == -1 is goodSHA), path[hi] fails.
	lo, hi := -1, len(path)-1
	skipped := map[int]bool{}
	for hi-lo > 1 {
		mid := pick(lo, hi, skipped)
		if mid < 0 {
			if lo >= 0 {
				res.Good = path[lo]
			}
			return res, fmt.Errorf("bisect: the first failing commit is one of %s (the others cannot be tested): %w", shorts(path[lo+1:hi+1]), ErrCannotBisect)
		}
		st, err := s.test(ctx, path[mid])
		if err != nil {
			if errors.Is(err, ErrCannotBisect) && lo >= 0 {
				res.Good = path[lo]
			}
			return res, err
		}
		switch st {
		case stateGood:
			lo = mid
		case stateBad:
			hi = mid
		case stateSkip:
			skipped[mid] = true
		}
	}
	if lo >= 0 {
		res.Good = path[lo]
	}
	res.Blame = path[hi]
	c, err := repo.Show(ctx, res.Blame)
	if err != nil {
		return res, fmt.Errorf("bisect: %w", err)
	}
	res.Subject, res.Author = c.Subject, c.Author
	s.log.Debug("bisected", zap.String("blame", res.Blame), zap.Int("steps", s.steps))
	return res, nil
}

// pick is the untested index strictly between lo and hi nearest to their
// middle, or -1 when every one was skipped.
func pick(lo, hi int, skipped map[int]bool) int {
	mid := lo + (hi-lo)/2
	for d := 0; d < hi-lo; d++ {
		for _, c := range []int{mid + d, mid - d} {
			if c > lo && c < hi && !skipped[c] {
				return c
			}
		}
	}
	return -1
}

// findGood probes back from bad for a commit where the tests pass. It
// returns it and the oldest commit seen failing, the search's new upper end.
func (s *bisection) findGood(ctx context.Context, badSHA string) (good, oldestBad string, err error) {
	limit := s.b.ProbeLimit
	if limit <= 0 {
		limit = DefaultProbeLimit
	}
	oldestBad = badSHA
	for k := 1; k <= limit; k *= 2 {
		sha, err := s.repo.Resolve(ctx, fmt.Sprintf("%s~%d", badSHA, k))
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return "", "", cerr
			}
			break // history is shorter than k
		}
		st, err := s.test(ctx, sha)
		if err != nil {
			return "", "", err
		}
		switch st {
		case stateGood:
			return sha, oldestBad, nil
		case stateBad:
			oldestBad = sha
		}
	}
	out, err := s.repo.Git(ctx, "rev-list", "--first-parent", "--max-parents=0", badSHA)
	if err != nil {
		return "", "", fmt.Errorf("bisect: root commit: %w", err)
	}
	root := strings.TrimSpace(out)
	if i := strings.IndexByte(root, '\n'); i >= 0 {
		root = root[:i]
	}
	if root != "" && root != badSHA {
		st, err := s.test(ctx, root)
		if err != nil {
			return "", "", err
		}
		if st == stateGood {
			return root, oldestBad, nil
		}
	}
	return "", "", fmt.Errorf("bisect: no commit where the tests pass, %d commits back from %s or at the root commit: %w", limit, task.Short(badSHA), ErrCannotBisect)
}

// test checks out sha and runs the tests once there.
func (s *bisection) test(ctx context.Context, sha string) (state, error) {
	if st, ok := s.states[sha]; ok {
		return st, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if s.b.MaxSteps > 0 && s.steps >= s.b.MaxSteps {
		return 0, fmt.Errorf("bisect: gave up after %d steps: %w", s.steps, ErrCannotBisect)
	}
	s.steps++
	if err := s.repo.Checkout(ctx, sha); err != nil {
		return 0, fmt.Errorf("bisect: %w", err)
	}
	o, err := s.b.Runner.Run(ctx, s.repo.Dir, s.tests, 1)
	var st state
	switch {
	case err != nil && ctx.Err() != nil:
		return 0, ctx.Err()
	case err != nil && notRunnable(err):
		st = stateSkip
	case err != nil:
		return 0, fmt.Errorf("bisect: run tests at %s: %w", task.Short(sha), err)
	default:
		st = classify(o, s.tests)
	}
	s.states[sha] = st
	s.log.Debug("bisect step", zap.String("commit", sha), zap.Stringer("state", st), zap.Int("step", s.steps))
	return st, nil
}

// classify turns one run of the tests into a state: any failure is bad,
// anything that did not run is a skip, and good needs every test passed.
func classify(o testrun.Outcome, tests []string) state {
	skip := len(o.Build) > 0 || len(o.Missing) > 0
	for _, id := range tests {
		c := count(o, id)
		if c.failures > 0 {
			return stateBad
		}
		if c.runs == 0 {
			skip = true
		}
	}
	if skip {
		return stateSkip
	}
	return stateGood
}

func shorts(shas []string) string {
	out := make([]string, len(shas))
	for i, s := range shas {
		out[i] = task.Short(s)
	}
	return strings.Join(out, ", ")
}
