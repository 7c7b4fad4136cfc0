package task

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
