package triage

import "testing"

func TestReasonClass(t *testing.T) {
	t.Parallel()
	for reason, want := range map[string]string{
		"flaky: 2/5 runs failed at abc1234; history":                                                                                          ReasonFlaky,
		"does not reproduce at abc1234: 0/5 runs failed; no history":                                                                          ReasonNotReproduced,
		"does not reproduce at abc1234: TestX did not run":                                                                                    ReasonNotReproduced,
		"duplicate of task t-1":                                                                                                               ReasonDuplicate,
		"duplicate: another task took the group while this triage ran":                                                                        ReasonDuplicate,
		"same failure as task t-3, which ended without a fix (no_patch: no candidate passed); triaged again in 5h0m0s":                        ReasonEndedUnfixed,
		"same blame commit abc1234 as task t-2: one task per breaking commit":                                                                 ReasonSameBlame,
		"cannot run TestX at abc1234: no such package":                                                                                        ReasonCannotRun,
		"repository opted out":                                                                                                                ReasonOptedOut,
		"cannot build ./x at abc1234: no such package in the module":                                                                          ReasonCannotRun,
		"does not reproduce at abc1234: package ./x builds":                                                                                   ReasonNotReproduced,
		"daily job budget of https://github.com/acme/w used up: 5 jobs queued on 2026-11-23 (UTC)":                                            ReasonBudget,
		"already fixed on main: x.TestA passed 5/5 runs at its head abc1234":                                                                  ReasonFixed,
		"a pull request by a person is in flight: https://github.com/acme/w/pull/3 (by alice, it changes a.go)":                               ReasonHumanFix,
		"the report has 9980 more failing groups (9980 failures) beyond the cap of 20 per report: not triaged (triage.max_groups_per_report)": ReasonBeyondCap,
		"pull request from a fork (mallory/w): not handled: refused by its .redfix.yaml at abc1234 (forks: false)":                            ReasonFork,
		"something new": ReasonOther,
	} {
		if got := ReasonClass(reason); got != want {
			t.Errorf("ReasonClass(%q) = %q, want %q", reason, got, want)
		}
	}
}
