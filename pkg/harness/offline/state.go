package offline

import (
	"bytes"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/unidiff"
)

// intents: why the policy took its last action.
type intent int

const (
	intentNone intent = iota
	intentApply
	intentTest
	intentUndo
	intentRefresh
	intentRestore
	intentRegress
	intentLocalize
)

// state is what the policy knows of the episode in progress, from its
// observations, and where it is in it.
type state struct {
	p     *Policy
	task  task.Task
	first *harness.Step
	seen  int

	pending *harness.Action
	intent  intent

	sawTask    bool
	diffTried  bool
	diffs      []unidiff.File
	subject    string
	reproTried bool
	repro      *tools.TestsResult
	failures   []task.Failure

	models    map[string]*fileModel
	attempted map[string]bool
	found     map[string][]string // find_file pattern → paths
	methods   map[string][]location
	called    map[string]bool
	testRead  bool

	built    bool
	cands    []*Candidate
	next     int
	pristine map[string][]string

	cur      *Candidate
	curInv   string
	curAfter []string
	mode     mode
	tried    []tried
	refresh  map[string]bool // files re-read after an edit did not apply
	stale    string          // the file to re-read in modeRefresh

	regressed bool // the tests around the failing ones passed too
	done      bool

	localized bool              // spectrum-based localization was asked for
	suspects  []testrun.Suspect // what it ranked
	applied   map[string]bool   // candidates applied, by the file they produce

	// reverts are the candidates held back as reverts of the blame
	// commit (revert.go), with why; curRevert marks the one being tried,
	// revertPassed the one that passed.
	reverts      []heldRevert
	curRevert    string
	revertPassed *Candidate
	revertWhy    string
}

type heldRevert struct {
	c   *Candidate
	why string
}

type mode int

const (
	modeIdle    mode = iota
	modeTest         // an edit is in; run the tests
	modeUndo         // an edit is in and failed; undo it
	modeRefresh      // an undo did not apply; read the file
	modeRestore      // put the file back as it was
	modeRegress      // the failing tests pass; run the tests around them
	modeFixed        // the tests pass
	modeStuck        // the workspace could not be restored
)

type tried struct {
	c       *Candidate
	outcome string
}

func newState(p *Policy, ep *harness.Episode) *state {
	return &state{
		p:         p,
		task:      ep.Task,
		models:    map[string]*fileModel{},
		attempted: map[string]bool{},
		found:     map[string][]string{},
		methods:   map[string][]location{},
		called:    map[string]bool{},
		pristine:  map[string][]string{},
		refresh:   map[string]bool{},
		applied:   map[string]bool{},
	}
}

// sameEpisode reports whether ep continues the episode the state tracks.
func (s *state) sameEpisode(ep *harness.Episode) bool {
	if len(ep.Steps) == 0 || len(ep.Steps) < s.seen || ep.Task.ID != s.task.ID {
		return false
	}
	if s.first != nil {
		f := ep.Steps[0]
		if f.Action.Name != s.first.Action.Name || !bytes.Equal(f.Action.Args, s.first.Action.Args) || !f.Started.Equal(s.first.Started) {
			return false
		}
	}
	return true
}

// key identifies an action by its name and arguments.
func key(a harness.Action) string { return a.Name + " " + string(a.Args) }
