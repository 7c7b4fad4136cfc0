package bisect

// The reproduction is sequential, and the search's runs are its evidence.
// Triage asks two questions of a failure: is it reliable (the code is
// broken) or flaky, and which commit broke it. It used to re-run the tests
// a fixed number of times at bad before the search; most of those runs
// told the search nothing it would not have learnt anyway. Now triage runs
// FirstRuns at bad (a pass there ends it: flaky), the search takes them as
// known results at bad, and the reliability verdict counts every run of
// the code at or after the culprit the search names: a failure there is
// the broken code failing again, as a run at bad would. Only when those
// fall short of the reruns asked for are more runs made at bad, and one
// that passes makes the failure flaky after all. A failure is called
// reliable, as before, when the reruns asked for failed and none passed.

// FirstRuns is how many times triage runs a failing test at bad before the
// search: two, one to see it fail again and one to see it fail twice.
const FirstRuns = 2

// BrokenRuns counts the runs of the finding at or after its culprit, the
// known ones included: those in which the tests failed and those in which
// one passed (tests is how many tests each run holds). Without a culprit
// there is no broken code to count: 0, 0.
func (f Finding) BrokenRuns(tests int) (failed, passed int) {
	if f.Kind != FindingCulprit || f.Culprit < 0 {
		return 0, 0
	}
	tests = max(1, tests)
	for i := f.Culprit; i < len(f.Results); i++ {
		fails, passes := 0, 0
		for _, r := range f.Results[i] {
			switch r {
			case ResultFail:
				fails++
			case ResultPass:
				passes++
			}
		}
		failed += fails / tests
		passed += passes
	}
	return failed, passed
}

// MoreRuns is how many more runs at bad a reliable verdict needs once the
// search is done: the reruns asked for less the failed runs of broken code
// already seen.
func MoreRuns(reruns, brokenFailed int) int {
	return max(0, reruns-brokenFailed)
}
