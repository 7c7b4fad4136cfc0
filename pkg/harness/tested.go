package harness

import "strings"

// tested counts the candidate patches an episode tests, whatever its
// policy: the distinct states of the workspace (each a change from the
// task's commit) that run_tests ran on after an edit had changed the
// workspace. A model's episode is counted as the offline policy's is, from
// what the tools did, not from what the policy says.
type tested struct {
	order []string // each state's diff, in the order first tested
	seen  map[string]bool
	dirty bool // an edit applied since the last run_tests
}

// edited notes an edit that applied.
func (t *tested) edited() { t.dirty = true }

// needsDiff reports whether a run of the tests now would test a state not
// yet known: only then is the workspace's diff worth taking.
func (t *tested) needsDiff() bool { return t.dirty }

// ran notes a run of the tests on the workspace whose diff is diff.
func (t *tested) ran(diff string) {
	t.dirty = false
	if strings.TrimSpace(diff) == "" || t.seen[diff] {
		return
	}
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	t.seen[diff] = true
	t.order = append(t.order, diff)
}

// count is how many patches were tested, and how many of them before the
// final patch was first tested: all of them when the episode ends with no
// patch, or with one it never tested.
func (t *tested) count(final string) (all, before int) {
	for i, d := range t.order {
		if strings.TrimSpace(final) != "" && d == final {
			return len(t.order), i
		}
	}
	return len(t.order), len(t.order)
}
