package bisect

import (
	"fmt"

	"github.com/redfix/redfix/pkg/task"
)

// Result is what one run of a test did at one commit, as the noisy search
// sees it.
type Result int

// The results of one run. Missing is a pass that no flake can turn into a
// failure: the test does not exist at that commit, so its runner runs
// nothing there. Skip says nothing about the culprit: the package did not
// build.
const (
	ResultPass Result = iota
	ResultFail
	ResultMissing
	ResultSkip
)

func (r Result) String() string {
	switch r {
	case ResultPass:
		return "pass"
	case ResultFail:
		return "fail"
	case ResultMissing:
		return "missing"
	case ResultSkip:
		return "skip"
	}
	return fmt.Sprintf("Result(%d)", int(r))
}

// CommitRuns is the result as a RunCache keeps it: one run, counted under
// its result.
func (r Result) CommitRuns() task.CommitRuns {
	switch r {
	case ResultPass:
		return task.CommitRuns{Passed: 1}
	case ResultFail:
		return task.CommitRuns{Failed: 1}
	case ResultMissing:
		return task.CommitRuns{Missing: 1}
	}
	return task.CommitRuns{Skipped: 1}
}

// expand turns counts into results; one skip is enough to say a commit
// does not build.
func expand(c task.CommitRuns) []Result {
	var rs []Result
	for range c.Passed {
		rs = append(rs, ResultPass)
	}
	for range c.Failed {
		rs = append(rs, ResultFail)
	}
	for range c.Missing {
		rs = append(rs, ResultMissing)
	}
	if c.Skipped > 0 {
		rs = append(rs, ResultSkip)
	}
	return rs
}

// summarize is one result for all tests of a run: any failure fails it;
// then a skip; then missing only when every test is missing.
func summarize(rs []Result) Result {
	out := ResultMissing
	for _, r := range rs {
		switch r {
		case ResultFail:
			return ResultFail
		case ResultSkip:
			out = ResultSkip
		case ResultPass:
			if out == ResultMissing {
				out = ResultPass
			}
		}
	}
	return out
}
