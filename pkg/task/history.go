package task

import "time"

// CommitRuns counts the runs of one test at one commit: passed, failed, not
// there (the test does not exist at that commit) and skipped (its package
// did not build).
type CommitRuns struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Missing int `json:"missing,omitempty"`
	Skipped int `json:"skipped,omitempty"`
}

// Add is the sum of r and o.
func (r CommitRuns) Add(o CommitRuns) CommitRuns {
	return CommitRuns{Passed: r.Passed + o.Passed, Failed: r.Failed + o.Failed, Missing: r.Missing + o.Missing, Skipped: r.Skipped + o.Skipped}
}

// Flaky says the test both passed and failed at this commit: flaky by
// definition.
func (r CommitRuns) Flaky() bool { return r.Passed > 0 && r.Failed > 0 }

// QuarantineEntry is a flaky test as triage last saw it: the evidence that
// it is flaky, and why it was not repaired.
type QuarantineEntry struct {
	Test        string `json:"test"`
	Repo        string `json:"repo"`
	Commit      string `json:"commit"`
	Fingerprint string `json:"fingerprint,omitempty"`
	TaskID      string `json:"task_id,omitempty"`
	// Runs and Failures are the re-runs at Commit.
	Runs     int    `json:"runs"`
	Failures int    `json:"failures"`
	Message  string `json:"message,omitempty"`
	// FlakeRate and FlakyCommits come from the test's history by commit.
	FlakeRate    float64   `json:"flake_rate"`
	FlakyCommits int       `json:"flaky_commits"`
	Reason       string    `json:"reason"`
	SeenAt       time.Time `json:"seen_at"`
}
