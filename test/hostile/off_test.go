package hostile

import (
	"path/filepath"
	"testing"
)

// TestBoundariesOff runs the scenarios whose checks guard a trust boundary
// against a build with the boundaries switched off (redfix_trusting): each
// check must then fail. A check that still passed would prove nothing.
func TestBoundariesOff(t *testing.T) {
	t.Parallel()
	confined(t)
	// Through the service: the bot's and the worker's git on mirrors'
	// work trees, and what their patches are made of.
	names := runnable("gitfile", "gitlink", "test-written", "py-setup-net", "py-cache-poison", "go-cache-poison", "py-root-file", "go-root-file")
	s, _ := runService(t, true, names...)
	outputs := s.outputs()
	for _, name := range names {
		s.prOutputs(name, outputs)
	}
	for _, name := range names {
		t.Run("service/"+name, func(t *testing.T) {
			// One marker for the stack: the first scenario to escape
			// shows it for all, so each is also checked on its own trace.
			what := serviceCases[name].check(s, name, outputs)
			if what == "" {
				t.Fatalf("with the boundaries off the check still passes: it proves nothing")
			}
			t.Logf("with the boundaries off, as expected: %s", what)
		})
	}

	_, worker := binaries(t, true)
	for _, name := range []string{"symlink-git", "testdata-link", "sparse"} {
		c := repairCases[name]
		t.Run("repair/"+name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			repo := buildRepo(t, c.repo, filepath.Join(t.TempDir(), "repo"), w.values)
			r := runRepair(t, w, worker, repo, c.test, c.script)
			what := c.check(w, r)
			if what == "" {
				t.Fatalf("with the boundaries off the check still passes: it proves nothing\nstdout:\n%s", r.stdout)
			}
			t.Logf("with the boundaries off, as expected: %s", what)
		})
	}
}
