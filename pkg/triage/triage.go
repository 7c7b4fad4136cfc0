// Package triage decides which failing tests become repair tasks. It groups
// a report's failures by fingerprint, drops what is already grouped or
// belongs to an opted-out repository, re-runs the rest at the failing commit
// to tell real failures from flaky ones, bisects the real ones to the commit
// that broke them, and saves and queues a task for each group. Whatever it
// drops is saved too, with its reason.
package triage

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// Store is the state triage keeps.
type Store interface {
	// ClaimGroup makes taskID the owner of the failure group fingerprint
	// unless a task owns it already, whose ID it then returns.
	ClaimGroup(ctx context.Context, fingerprint, taskID string) (existingTaskID string, created bool, err error)
	// ReleaseGroup gives the group up if taskID still owns it, so that a
	// report that triage could not finish is triaged again on redelivery.
	ReleaseGroup(ctx context.Context, fingerprint, taskID string) error
	// RefreshGroup renews taskID's claim while triage works on the group,
	// taking it back if it lapsed; false means another task holds it now.
	RefreshGroup(ctx context.Context, fingerprint, taskID string) (bool, error)
	SaveTask(ctx context.Context, t task.Task) error
	// GetTask reads a task; an error wrapping task.ErrNotFound when
	// there is none.
	GetTask(ctx context.Context, id string) (task.Task, error)
	// GroupClaim is the group's owner and how long its claim has left.
	GroupClaim(ctx context.Context, fingerprint string) (owner string, ttl time.Duration, ok bool, err error)
	// TakeOverGroup makes taskID the group's owner if from still owns it;
	// false when another task owns it now.
	TakeOverGroup(ctx context.Context, fingerprint, from, taskID string) (bool, error)
	// RecordRun adds one run of a test to its history.
	RecordRun(ctx context.Context, testID string, failed bool) error
	TestHistory(ctx context.Context, testID string) (runs, failures int, err error)
}

// Queue takes jobs for the workers.
type Queue interface {
	// Enqueue publishes j; duplicate says the queue already held a job
	// with its ID.
	Enqueue(ctx context.Context, j job.Job) (duplicate bool, err error)
}

// Config tunes triage.
type Config struct {
	Reruns int // runs at the failing commit; 5 when 0
	// WorkDir is where workspaces are made; "" for the system's temporary
	// directory.
	WorkDir        string
	MaxBisectSteps int // 0 for no bound
	// OptOut are repositories that triage leaves alone.
	OptOut []string
	// DailyJobs is how many jobs a repository may get each UTC day, 0 for
	// no limit; DailyJobsByRepo sets it for some repositories (0 there is
	// no limit too). The count is the store's (see JobBudget).
	DailyJobs       int
	DailyJobsByRepo map[string]int
	// Confidence is the bisection's (bisect.DefaultConfidence when 0).
	Confidence float64
	// BisectParallel bounds the commits a bisection tests at once.
	BisectParallel int
	// ClaimRefresh is how often a group's claim is renewed while triage
	// works on it; 0 means a minute. It must be well under the store's
	// triage claim TTL.
	ClaimRefresh time.Duration
	// Checkouts, when set, opens the workspace (from a mirror of a remote
	// repository, with its credentials); nil clones afresh.
	Checkouts Checkouts
	// Heads finds the default branch's head, where a failure may already
	// be fixed; nil uses Checkouts when it can tell, else asks the
	// repository itself (git ls-remote, no credentials).
	Heads DefaultHeads
	// HumanFixes, when set, finds a person's open pull request that
	// already names the failing tests or the blame commit, or changes the
	// files the failure points at; the task is then dropped.
	HumanFixes HumanFixes
	// MaxGroupsPerReport bounds the failure groups of one report that
	// triage decides one by one (reproduces, bisects, makes a task of);
	// DefaultMaxGroupsPerReport when 0. See Process.
	MaxGroupsPerReport int
	// Languages chooses each report's language driver from its checkout
	// at the failing commit: the driver sets the checkout up, and runs,
	// names and builds its tests for the reproduction and the bisection.
	// There is no default language: without it every report is dropped as
	// one whose tests cannot be run (lang.ErrNoDriver).
	Languages Languages
	// RepoPolicies, when set, reads each report's repository policy at its
	// commit (.redfix.yaml narrowing the central configuration): an
	// opted-out repository's groups are dropped, and its daily limit
	// lowers DailyJobs.
	RepoPolicies RepoPolicies
	// Forks says, per repository, whether reports of change requests from
	// forks (Input.Fork) are triaged; where it says no, and with it nil,
	// they are dropped (ReasonFork). A repository's policy narrows it,
	// read at the default branch's head, never at the fork's commit, whose
	// files the fork's author wrote.
	Forks ForkOptIn
	// OpenPulls, when set, counts redfix's open pull requests, for a
	// policy's limit on them when a retry is asked for (AdmitRetry; the
	// worker holds a fresh task to it).
	OpenPulls OpenPulls
}

// Checkouts opens a workspace of repo at commit under parent.
type Checkouts interface {
	Open(ctx context.Context, repo, commit, parent string) (*workspace.Workspace, error)
}

// DefaultReruns is Config.Reruns' default.
const DefaultReruns = 5

// DefaultMaxGroupsPerReport is Config.MaxGroupsPerReport's default.
const DefaultMaxGroupsPerReport = 20

// Triage is the service.
type Triage struct {
	store  Store
	queue  Queue
	runner Runner
	heads  DefaultHeads
	cfg    Config
	log    *zap.Logger
	now    func() time.Time
}

// New makes the service. A nil runner runs each report's tests with its
// language driver; a nil log logs nothing.
func New(store Store, q Queue, runner Runner, cfg Config, log *zap.Logger) *Triage {
	if log == nil {
		log = zap.NewNop()
	}
	if cfg.Reruns < 1 {
		cfg.Reruns = DefaultReruns
	}
	if cfg.MaxGroupsPerReport < 1 {
		cfg.MaxGroupsPerReport = DefaultMaxGroupsPerReport
	}
	heads := cfg.Heads
	if heads == nil {
		heads, _ = cfg.Checkouts.(DefaultHeads)
	}
	if heads == nil {
		heads = lsRemoteHeads{}
	}
	return &Triage{store: store, queue: q, runner: runner, heads: heads, cfg: cfg, log: log, now: time.Now}
}

// Input is one failing CI run to triage.
type Input struct {
	Repo   string // a path or URL that git can clone
	Commit string // the failing commit
	Good   string // the last green commit, if known
	Branch string
	// Fork is the head repository of a pull request from a fork that the
	// run tested ("" for the repository's own commits): repaired only
	// where Config.Forks and the repository's policy handle forks.
	Fork   string
	Report report.Result
	// Submission and Received identify the report, when it came through
	// the intake: a redelivered report then gets the same task IDs, so
	// that triage picks up where a crashed instance stopped.
	Submission string
	Received   time.Time
}

// Outcome is what triage did with one failure group.
type Outcome struct {
	Fingerprint string      `json:"fingerprint"`
	TaskID      string      `json:"task_id,omitempty"`
	Tests       []string    `json:"tests"`
	Status      task.Status `json:"status"` // queued, dropped, or failed (its setup failed)
	Reason      string      `json:"reason,omitempty"`
	Task        *task.Task  `json:"task,omitempty"`
	// TestRuns counts the test runs spent: reruns and bisection steps.
	TestRuns int `json:"test_runs"`
}
