// Package offline is the policy redfix uses when no model is configured. It
// repairs without one, by the same actions a model would take: it reads the
// task and the blame commit, reproduces the failure, reads the suspicious
// code, then tries small edits from repair templates (flipped comparisons,
// signs, off-by-one constants, boolean conditions, undoing a blame hunk) one
// at a time, running the failing tests after each and undoing each that does
// not make them pass.
//
// The policy sees only observations, never the workspace: everything it
// knows of a file comes from read_file and go_to_line listings.
package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/unidiff"
)

// Defaults of the options.
const (
	DefaultMaxSteps = 40 // when the episode sets none
	DefaultMaxFiles = 4  // source files read before repairing
)

// Policy is the offline policy. One Policy may serve episodes one after the
// other; it keeps its state for the episode in progress and starts afresh
// when it sees a new one.
type Policy struct {
	log      *zap.Logger
	maxFiles int

	mu sync.Mutex
	st *state
}

// Option configures a Policy.
type Option func(*Policy)

// WithMaxFiles caps how many source files the policy reads before it starts
// editing.
func WithMaxFiles(n int) Option {
	return func(p *Policy) {
		if n > 0 {
			p.maxFiles = n
		}
	}
}

// New returns an offline policy.
func New(log *zap.Logger, opts ...Option) *Policy {
	if log == nil {
		log = zap.NewNop()
	}
	p := &Policy{log: log.Named("offline"), maxFiles: DefaultMaxFiles}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Name is the policy's name in trajectories.
func (p *Policy) Name() string { return "offline" }

var _ harness.Policy = (*Policy)(nil)

// Next chooses the next action from what the episode's steps showed.
func (p *Policy) Next(ctx context.Context, ep *harness.Episode) (harness.Action, error) {
	if err := ctx.Err(); err != nil {
		return harness.Action{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st == nil || !p.st.sameEpisode(ep) {
		p.st = newState(p, ep)
	}
	st := p.st
	for _, s := range ep.Steps[st.seen:] {
		st.observe(s)
	}
	st.seen = len(ep.Steps)
	if len(ep.Steps) > 0 && st.first == nil {
		first := ep.Steps[0]
		st.first = &first
	}
	a := st.decide(ep)
	st.pending = &a
	p.log.Debug("next action", zap.String("task", ep.Task.ID), zap.Int("step", len(ep.Steps)+1),
		zap.String("action", a.Name), zap.String("thought", a.Thought))
	return a, nil
}

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
	repro      *harness.TestsResult
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

// ---- observing ----

func (s *state) observe(step harness.Step) {
	a, obs := step.Action, step.Observation
	in := intentNone
	if s.pending != nil && a.Name == s.pending.Name && bytes.Equal(a.Args, s.pending.Args) {
		in = s.intent
	}
	s.pending, s.intent = nil, intentNone
	s.attempted[key(a)] = true
	switch a.Name {
	case harness.ActGetTaskDetails:
		s.sawTask = true
	case harness.ActGetDiffDetails:
		s.diffTried = true
		if !obs.IsError {
			// What could be read is evidence even when the rest cannot.
			s.diffs, _ = unidiff.Parse(obs.Content)
		}
	case harness.ActRunTests:
		switch in {
		case intentTest:
			s.afterTest(obs)
			return
		case intentRegress:
			s.afterRegress(obs)
			return
		case intentLocalize:
			s.afterLocalize(obs)
			return
		}
		if s.repro == nil {
			s.reproTried = true
			if obs.Tests != nil {
				t := *obs.Tests
				s.repro = &t
				s.failures = append(append([]task.Failure(nil), t.Failed...), t.Build...)
			}
		}
	case harness.ActReadFile, harness.ActGoToLine:
		var args struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(a.Args, &args)
		if obs.IsError || args.Path == "" {
			if in == intentRefresh {
				s.mode = modeStuck
			}
			return
		}
		listing := ParseListing(obs.Content)
		if in == intentRefresh {
			// What the file is now: start from scratch.
			s.models[args.Path] = newFileModel(args.Path)
		}
		m := s.models[args.Path]
		if m == nil {
			m = newFileModel(args.Path)
			s.models[args.Path] = m
		}
		m.merge(listing)
		// A long file's listing stops short of its end; the header says
		// how long the file is.
		m.extend(ListingTotal(obs.Content))
		if in == intentRefresh {
			s.afterRefresh(args.Path)
		}
	case harness.ActFindFile:
		var args harness.FindFileArgs
		_ = json.Unmarshal(a.Args, &args)
		s.found[args.Pattern] = nil
		if !obs.IsError {
			s.found[args.Pattern] = goPaths(obs.Content)
		}
	case harness.ActSearchMethod, harness.ActSearchMethodInFile, harness.ActSearchCode:
		var args harness.NameArgs
		_ = json.Unmarshal(a.Args, &args)
		// A search that found nothing may suggest other names, with their
		// places: those are not where the name is.
		s.methods[args.Name] = nil
		if !obs.IsError {
			s.methods[args.Name] = locations(obs.Content)
		}
	case harness.ActEdit:
		switch in {
		case intentApply:
			s.afterApply(obs)
		case intentUndo, intentRestore:
			s.afterUndo(obs)
		}
	}
}

func key(a harness.Action) string { return a.Name + " " + string(a.Args) }

var goPathRE = regexp.MustCompile(`^[\w./\-]+\.go$`)
var locRE = regexp.MustCompile(`([\w./\-]+\.go):(\d+)`)

// goPaths are the Go files a find_file observation lists, one a line; its
// header, which quotes the pattern, and its notes are not files.
func goPaths(content string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(content, "\n") {
		p := strings.TrimPrefix(strings.TrimSpace(l), "./")
		if goPathRE.MatchString(p) && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// locations are the places a search observation names, outside the code it
// quotes (numbered lines, which may say anything).
func locations(content string) []location {
	var out []location
	for _, l := range strings.Split(content, "\n") {
		if listingFormats[0].re.MatchString(l) {
			continue
		}
		for _, m := range locRE.FindAllStringSubmatch(l, -1) {
			var n int
			fmt.Sscan(m[2], &n)
			out = append(out, location{path: m[1], line: n})
		}
	}
	return out
}

func applied(obs harness.Observation) bool {
	if obs.Edit != nil {
		return obs.Edit.Applied
	}
	return !obs.IsError
}

func (s *state) afterApply(obs harness.Observation) {
	c := s.cur
	if !applied(obs) {
		s.tried = append(s.tried, tried{c, "did not apply: " + firstLine(obs.Content)})
		s.cur, s.mode = nil, modeIdle
		if !s.refresh[c.Path] {
			s.refresh[c.Path] = true
			s.mode, s.stale = modeRefresh, c.Path // our copy of the file may be stale
		}
		return
	}
	s.models[c.Path].lines = append([]string(nil), s.curAfter...)
	// The harness reports only the findings an edit brings, not the
	// file's old ones.
	if obs.Edit != nil && strings.TrimSpace(obs.Edit.Diagnostics) != "" {
		s.tried = append(s.tried, tried{c, "static analysis: " + firstLine(obs.Edit.Diagnostics)})
		s.mode = modeUndo
		return
	}
	s.mode = modeTest
}

func (s *state) afterTest(obs harness.Observation) {
	if obs.Tests != nil && obs.Tests.OK {
		s.mode = modeFixed
		if len(s.otherTests()) > 0 {
			s.mode = modeRegress
		}
		return
	}
	why := "tests still fail"
	if obs.Tests != nil {
		switch {
		case len(obs.Tests.Build) > 0:
			why = "does not build: " + obs.Tests.Build[0].Message
		case len(obs.Tests.Failed) > 0:
			why = "tests still fail: " + obs.Tests.Failed[0].Message
		}
	}
	s.tried = append(s.tried, tried{s.cur, why})
	s.mode = modeUndo
}

func (s *state) afterRegress(obs harness.Observation) {
	if obs.Tests != nil && obs.Tests.OK {
		s.regressed = true
		s.mode = modeFixed
		return
	}
	why := "the tests around it fail"
	if obs.Tests != nil {
		var names []string
		for _, f := range append(append([]task.Failure(nil), obs.Tests.Failed...), obs.Tests.Build...) {
			names = append(names, f.Test)
		}
		if len(names) > 0 {
			why = "passes the failing tests but breaks " + strings.Join(names, ", ")
		}
	}
	s.tried = append(s.tried, tried{s.cur, why})
	s.mode = modeUndo
}

// otherTests are the IDs of the tests seen next to the failing ones, in the
// test files the policy has read: a candidate must not break them.
func (s *state) otherTests() []string {
	oracle := map[string]bool{}
	pkg := ""
	for _, f := range s.failures {
		fn, _, _ := strings.Cut(f.Test, "/")
		oracle[fn] = true
		if pkg == "" {
			pkg = f.Package
		}
	}
	var ids []string
	seen := map[string]bool{}
	for p, m := range s.models {
		if !strings.HasSuffix(p, "_test.go") || (pkg != "" && path.Dir(p) != "." && !strings.HasSuffix(pkg, "/"+path.Dir(p)) && pkg != path.Dir(p)) {
			continue
		}
		for _, l := range m.lines {
			mm := testFuncRE.FindStringSubmatch(l)
			if mm == nil || oracle[mm[1]] || seen[mm[1]] {
				continue
			}
			seen[mm[1]] = true
			id := mm[1]
			if pkg != "" {
				id = pkg + "." + id
			}
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

var testFuncRE = regexp.MustCompile(`^func (Test\w*)\(\w+ \*testing\.T\)`)

func (s *state) afterUndo(obs harness.Observation) {
	c := s.cur
	if !applied(obs) {
		s.mode, s.stale = modeRefresh, c.Path
		return
	}
	s.models[c.Path].lines = append([]string(nil), s.pristine[c.Path]...)
	s.cur, s.mode = nil, modeIdle
}

// afterRefresh handles a file read after an edit did not apply: if the file
// is not as the policy left it, put it back.
func (s *state) afterRefresh(p string) {
	m := s.models[p]
	orig, ok := s.pristine[p]
	if !ok {
		s.mode = modeIdle
		return
	}
	if s.cur == nil {
		// A candidate did not apply: the fresh copy is the truth now.
		if m.complete() {
			s.pristine[p] = append([]string(nil), m.lines...)
		}
		s.mode = modeIdle
		return
	}
	if equalLines(m.lines, orig) {
		s.cur, s.mode = nil, modeIdle
		return
	}
	s.mode = modeRestore
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// ---- deciding ----

func (s *state) decide(ep *harness.Episode) harness.Action {
	maxSteps := ep.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	left := maxSteps - len(ep.Steps) // steps left, this one included

	switch s.mode {
	case modeFixed:
		return s.exit(s.fixedSummary())
	case modeStuck:
		return s.exit(s.summary("I could not restore " + s.cur.Path + " after a failed candidate; the workspace may hold a partial change and should not be used."))
	case modeRegress:
		if left >= 2 {
			others := s.otherTests()
			return s.act(intentRegress, harness.ActRunTests, fmt.Sprintf(
				"The failing tests pass. Before calling it fixed, run the %d other test(s) next to them (%s) so the change breaks nothing.",
				len(others), strings.Join(shortNames(others, 4), ", ")), harness.RunTestsArgs{Tests: append(s.task.Tests(), others...)})
		}
		s.mode = modeFixed
		return s.exit(s.fixedSummary())
	case modeTest:
		if left >= 2 {
			return s.act(intentTest, harness.ActRunTests, fmt.Sprintf(
				"The edit applied cleanly. Run the failing tests to see whether %s fixes them.", s.cur.What), harness.RunTestsArgs{})
		}
		s.mode = modeUndo
		fallthrough
	case modeUndo:
		if left >= 2 {
			return s.act(intentUndo, harness.ActEdit, fmt.Sprintf(
				"That did not work (%s). Undo it so the next hypothesis starts from the original code.", s.lastOutcome()),
				harness.EditArgs{Path: s.cur.Path, Blocks: s.curInv})
		}
	case modeRefresh:
		p := s.stale
		if left >= 3 && p != "" {
			return s.act(intentRefresh, harness.ActReadFile, fmt.Sprintf(
				"The edit did not apply as expected. Re-read %s to see its current contents.", p), harness.ReadFileArgs{Path: p})
		}
	case modeRestore:
		if left >= 2 {
			if a, ok := s.restore(); ok {
				return a
			}
		}
		s.mode = modeStuck
		return s.exit(s.summary("I could not restore " + s.cur.Path + " after a failed candidate; the workspace may hold a partial change and should not be used."))
	}
	if s.mode != modeIdle {
		return s.exit(s.summary("The step budget ran out in the middle of a candidate; the last edit may still be in the workspace."))
	}

	if !s.sawTask {
		return s.act(intentNone, harness.ActGetTaskDetails,
			"Start with the task: which tests fail, with what message and stack trace, and which commit broke them.", nil)
	}
	if s.task.Bisection.Blame != "" && !s.diffTried {
		return s.act(intentNone, harness.ActGetDiffDetails, fmt.Sprintf(
			"Bisection blames commit %s. Its diff is the most likely place for the bug: read it.", task.Short(s.task.Bisection.Blame)), harness.DiffArgs{})
	}
	if !s.reproTried && s.repro == nil {
		return s.act(intentNone, harness.ActRunTests,
			"Reproduce the failure before changing anything, to see the current message and frames.", harness.RunTestsArgs{})
	}
	if s.repro != nil && s.repro.OK {
		return s.exit("The failing tests pass in this workspace: I could not reproduce the failure, so I changed nothing.")
	}
	if len(s.failures) == 0 {
		s.failures = s.task.Failures
	}
	if s.wantsLocalize(left) {
		return s.localize()
	}
	if a, ok := s.nextRead(left); ok {
		return a
	}
	if !s.built {
		s.build()
	}
	// Candidates: edit, run_tests (twice with a regression check), undo,
	// and an exit after them.
	need := 4
	if len(s.otherTests()) > 0 {
		need = 5
	}
	for left >= need && s.next < len(s.cands) {
		c := s.cands[s.next]
		s.next++
		m := s.models[c.Path]
		if m == nil {
			continue
		}
		fwd, inv, after, ok := blocks(m.lines, c.changes)
		if !ok {
			continue
		}
		// A candidate is never tried twice: the same file produced again
		// is the same hypothesis.
		k := c.Path + "\x00" + strings.Join(after, "\n")
		if s.applied[k] {
			continue
		}
		s.applied[k] = true
		s.cur, s.curInv, s.curAfter = c, inv, after
		return s.act(intentApply, harness.ActEdit, s.hypothesis(c), harness.EditArgs{Path: c.Path, Blocks: fwd})
	}
	if s.next < len(s.cands) {
		return s.exit(s.summary(fmt.Sprintf("No candidate passed before the step budget ran out (%d of %d candidates left untried).", len(s.cands)-s.next, len(s.cands))))
	}
	return s.exit(s.summary("No candidate passed."))
}

func (s *state) act(in intent, name, thought string, args any) harness.Action {
	s.intent = in
	return harness.NewAction(name, thought, args)
}

func (s *state) exit(summary string) harness.Action {
	s.done = true
	return s.act(intentNone, harness.ActExit, "Done: "+firstLine(summary), harness.ExitArgs{Summary: summary})
}

func (s *state) lastOutcome() string {
	if n := len(s.tried); n > 0 {
		return s.tried[n-1].outcome
	}
	return "tests still fail"
}

// restore writes the file back as it was before the current candidate.
func (s *state) restore() (harness.Action, bool) {
	c := s.cur
	m := s.models[c.Path]
	orig := s.pristine[c.Path]
	ch, ok := diffLines(m.lines, orig)
	if !ok || !m.complete() {
		return harness.Action{}, false
	}
	search, replace, ok := makeBlock(m.lines, ch)
	if !ok {
		return harness.Action{}, false
	}
	s.curAfter = orig
	return s.act(intentRestore, harness.ActEdit, fmt.Sprintf(
		"%s is not as it was before my last candidate. Put the original lines back.", c.Path),
		harness.EditArgs{Path: c.Path, Blocks: Block(search, replace)}), true
}

func (s *state) hypothesis(c *Candidate) string {
	n := len(s.tried) + 1
	why := strings.Join(c.Why, "; ")
	if why == "" {
		why = "it is near the failure"
	}
	if c.Old != "" {
		return fmt.Sprintf("Hypothesis %d: %s line %d `%s` is wrong — %s (%s). Suspicious because %s.",
			n, c.Path, c.Line, strings.TrimSpace(c.Old), c.What, c.Template, why)
	}
	return fmt.Sprintf("Hypothesis %d: in %s, %s. Suspicious because %s.", n, c.Path, c.What, why)
}

func shortNames(ids []string, n int) []string {
	var out []string
	for i, id := range ids {
		if i == n {
			out = append(out, "…")
			break
		}
		if j := strings.LastIndex(id, ".Test"); j >= 0 {
			id = id[j+1:]
		}
		out = append(out, id)
	}
	return out
}

func (s *state) failureLine() string {
	if len(s.failures) == 0 {
		return "the failing tests"
	}
	f := s.failures[0]
	msg := f.Test
	if f.Message != "" {
		msg += " (" + firstLine(f.Message) + ")"
	}
	if n := len(s.failures); n > 1 {
		msg += fmt.Sprintf(" and %d more", n-1)
	}
	return msg
}

func (s *state) fixedSummary() string {
	c := s.cur
	var b strings.Builder
	if c.Old != "" {
		fmt.Fprintf(&b, "Changed %s line %d from `%s` to `%s` (%s: %s).", c.Path, c.Line, strings.TrimSpace(c.Old), strings.TrimSpace(c.New), c.Template, c.What)
	} else {
		fmt.Fprintf(&b, "In %s: %s (%s).", c.Path, c.What, c.Template)
	}
	if len(c.Why) > 0 {
		fmt.Fprintf(&b, " Why this place: %s.", strings.Join(c.Why, "; "))
	}
	if s.task.Bisection.Blame != "" {
		fmt.Fprintf(&b, " Blame commit: %s", task.Short(s.task.Bisection.Blame))
		if s.task.Bisection.Subject != "" {
			fmt.Fprintf(&b, " %q", s.task.Bisection.Subject)
		}
		b.WriteString(".")
	}
	fmt.Fprintf(&b, " Before: %s failed; now the failing tests pass", s.failureLine())
	if s.regressed {
		fmt.Fprintf(&b, ", and so do the %d other test(s) next to them", len(s.otherTests()))
	}
	b.WriteString(".")
	if n := len(s.tried); n > 0 {
		fmt.Fprintf(&b, " %d earlier candidate(s) did not pass and were undone.", n)
	}
	b.WriteString(" Found by the offline repair templates, without a model: review whether the change is the intended behavior.")
	return b.String()
}

func (s *state) summary(head string) string {
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, " Failure: %s.", s.failureLine())
	if len(s.tried) == 0 {
		b.WriteString(" I found no suspicious line to which a repair template applies.")
	} else {
		fmt.Fprintf(&b, " I tried %d candidate edit(s), each undone after it failed:", len(s.tried))
		for i, t := range s.tried {
			if i == 8 {
				fmt.Fprintf(&b, "\n- … and %d more", len(s.tried)-8)
				break
			}
			fmt.Fprintf(&b, "\n- %s: %s", t.c.Describe(), t.outcome)
		}
		b.WriteString("\nThe bug is probably not a one-token mistake or a revertible hunk; it needs a model or a person.")
	}
	return b.String()
}

// ---- reading ----

// nextRead is the next read that localization wants, if the budget allows.
func (s *state) nextRead(left int) (harness.Action, bool) {
	if left < 8 { // keep room for at least one candidate
		return harness.Action{}, false
	}
	try := func(name, thought string, args any) (harness.Action, bool) {
		a := harness.NewAction(name, thought, args)
		if s.attempted[key(a)] {
			return harness.Action{}, false
		}
		return s.act(intentNone, name, thought, args), true
	}
	reads := 0
	for p := range s.models {
		if isGoSource(p) {
			reads++
		}
	}
	// 1. The source files the blame commit changed, most changed first.
	type changed struct {
		path string
		n    int
	}
	var files []changed
	for _, d := range s.diffs {
		if !isGoSource(d.NewPath) {
			continue
		}
		n := 0
		for _, h := range d.Hunks {
			a, r := h.Changed()
			n += a + r
		}
		files = append(files, changed{d.NewPath, n})
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].n > files[j].n })
	for i, f := range files {
		if i >= s.p.maxFiles {
			break
		}
		if s.models[f.path] == nil {
			if a, ok := try(harness.ActReadFile, fmt.Sprintf(
				"The blame commit changed %s (%d lines). Read it whole to see the changed lines in context.", f.path, f.n),
				harness.ReadFileArgs{Path: f.path}); ok {
				return a, true
			}
		}
	}
	// 2. Blame hunks the whole-file read did not show (long files).
	for _, d := range s.diffs {
		m := s.models[d.NewPath]
		if m == nil || !isGoSource(d.NewPath) || m.complete() {
			continue
		}
		for _, h := range d.Hunks {
			if _, ok := locateHunk(m, h); !ok {
				if a, ok := try(harness.ActGoToLine, fmt.Sprintf(
					"The listing of %s did not show the blame hunk at line %d. Go there.", d.NewPath, h.NewStart),
					harness.GoToLineArgs{Path: d.NewPath, Line: h.NewStart}); ok {
					return a, true
				}
			}
		}
	}
	// 3. Source files the stack traces name.
	for _, fr := range s.frameRefs() {
		if !isGoSource(fr.path) {
			continue
		}
		p, ok := s.resolve(fr.path)
		if !ok {
			if reads >= s.p.maxFiles {
				continue
			}
			base := path.Base(fr.path)
			if a, ok := try(harness.ActFindFile, fmt.Sprintf(
				"The stack trace names %s:%d. Find that file in the repository.", fr.path, fr.line),
				harness.FindFileArgs{Pattern: base}); ok {
				return a, true
			}
			continue
		}
		if m := s.models[p]; m == nil {
			if reads >= s.p.maxFiles {
				continue
			}
			if a, ok := try(harness.ActReadFile, fmt.Sprintf(
				"The stack trace goes through %s line %d. Read that file.", p, fr.line), harness.ReadFileArgs{Path: p}); ok {
				return a, true
			}
		} else if _, ok := m.line(fr.line); !ok {
			if a, ok := try(harness.ActGoToLine, fmt.Sprintf(
				"Look at %s around line %d, where the stack trace points.", p, fr.line),
				harness.GoToLineArgs{Path: p, Line: fr.line}); ok {
				return a, true
			}
		}
	}
	// 3b. The lines spectrum-based localization ranked highest.
	if a, ok := s.readSuspects(try); ok {
		return a, true
	}
	// 4. The failing test itself, to learn what it calls. Worth its steps
	//    when the blame commit says little, or the budget is roomy.
	blameLines := len(files) > 0
	if !s.testRead && (!blameLines || left >= 24) {
		if a, ok := s.readTest(try); ok {
			return a, true
		}
	}
	// 5. Without a blame commit to go on, read the functions the test calls.
	if !blameLines && s.testRead {
		names := make([]string, 0, len(s.called))
		for n := range s.called {
			names = append(names, n)
		}
		sort.Strings(names)
		asked := 0
		for _, n := range names {
			if s.defined(n) {
				continue
			}
			if asked >= 3 {
				break
			}
			asked++
			if a, ok := try(harness.ActSearchMethod, fmt.Sprintf(
				"The failing test calls %s. Find where it is defined.", n), harness.NameArgs{Name: n}); ok {
				return a, true
			}
		}
		for _, n := range names {
			for _, l := range s.methods[n] {
				if !isGoSource(l.path) || s.models[l.path] != nil || reads >= s.p.maxFiles {
					continue
				}
				if a, ok := try(harness.ActReadFile, fmt.Sprintf(
					"%s is defined in %s. Read that file.", n, l.path), harness.ReadFileArgs{Path: l.path}); ok {
					return a, true
				}
			}
		}
	}
	return harness.Action{}, false
}

// readTest reads the failing test's code and records the names it calls.
func (s *state) readTest(try func(string, string, any) (harness.Action, bool)) (harness.Action, bool) {
	if len(s.failures) == 0 {
		s.testRead = true
		return harness.Action{}, false
	}
	fn, _, _ := strings.Cut(s.failures[0].Test, "/")
	// Where is it? A frame in a _test.go file, or search for the function.
	var at *location
	for _, fr := range s.frameRefs() {
		if strings.HasSuffix(fr.path, "_test.go") {
			if p, ok := s.resolve(fr.path); ok {
				at = &location{p, fr.line}
				break
			}
			if a, ok := try(harness.ActFindFile, fmt.Sprintf(
				"The failing test's assertion is at %s:%d. Find that file.", fr.path, fr.line),
				harness.FindFileArgs{Pattern: path.Base(fr.path)}); ok {
				return a, true
			}
		}
	}
	if at == nil {
		for _, l := range s.methods[fn] {
			if strings.HasSuffix(l.path, "_test.go") {
				at = &l
				break
			}
		}
	}
	if at == nil {
		if a, ok := try(harness.ActSearchMethod, fmt.Sprintf(
			"Find the failing test %s to see what it calls.", fn), harness.NameArgs{Name: fn}); ok {
			return a, true
		}
		s.testRead = true
		return harness.Action{}, false
	}
	if m := s.models[at.path]; m != nil {
		if _, ok := m.line(at.line); ok {
			s.testRead = true
			s.collectCalls(m, at.line)
			return harness.Action{}, false
		}
	}
	if s.models[at.path] == nil {
		if a, ok := try(harness.ActReadFile, fmt.Sprintf(
			"Read %s, where the failing test %s is (line %d), to see which functions it exercises and which tests sit next to it.", at.path, fn, at.line),
			harness.ReadFileArgs{Path: at.path}); ok {
			return a, true
		}
	}
	if a, ok := try(harness.ActGoToLine, fmt.Sprintf(
		"Read the failing test %s around line %d to see which functions it exercises.", fn, at.line),
		harness.GoToLineArgs{Path: at.path, Line: at.line}); ok {
		return a, true
	}
	s.testRead = true
	if m := s.models[at.path]; m != nil {
		s.collectCalls(m, at.line)
	}
	return harness.Action{}, false
}

var callRE = regexp.MustCompile(`\b([A-Za-z_]\w*)\s*\(`)

var notCalls = map[string]bool{
	"if": true, "for": true, "func": true, "return": true, "switch": true, "make": true, "len": true,
	"append": true, "new": true, "cap": true, "panic": true, "copy": true, "delete": true, "string": true,
	"int": true, "int64": true, "float64": true, "byte": true, "rune": true, "error": true, "bool": true,
	"Errorf": true, "Fatalf": true, "Fatal": true, "Error": true, "Logf": true, "Log": true, "Run": true,
	"Helper": true, "Parallel": true, "Skip": true, "Skipf": true, "Cleanup": true, "TempDir": true,
	"Sprintf": true, "Sprint": true, "Println": true, "Printf": true, "DeepEqual": true, "Equal": true,
	"range": true, "go": true, "defer": true, "recover": true, "min": true, "max": true, "Name": true,
}

// collectCalls records the names of the functions called by the test
// function around line n.
func (s *state) collectCalls(m *fileModel, n int) {
	start, end, _, ok := m.funcSpan(n)
	if !ok {
		start, end = n-25, n+25
	}
	for i := start; i <= end; i++ {
		t, ok := m.line(i)
		if !ok {
			continue
		}
		if i == start && strings.HasPrefix(t, "func ") {
			continue
		}
		for _, c := range callRE.FindAllStringSubmatch(t, -1) {
			if !notCalls[c[1]] && !strings.HasPrefix(c[1], "Test") {
				s.called[c[1]] = true
			}
		}
	}
}

func (s *state) defined(name string) bool {
	for p, m := range s.models {
		if isGoSource(p) {
			if _, ok := m.funcs()[name]; ok {
				return true
			}
		}
	}
	return false
}

// frameRefs are the failures' frames as locations, in order.
func (s *state) frameRefs() []location {
	var out []location
	seen := map[string]bool{}
	for _, f := range s.failures {
		for _, fr := range f.Frames {
			if seen[fr] {
				continue
			}
			seen[fr] = true
			i := strings.LastIndexByte(fr, ':')
			if i < 0 {
				continue
			}
			var n int
			if _, err := fmt.Sscan(fr[i+1:], &n); err != nil {
				continue
			}
			out = append(out, location{path: fr[:i], line: n})
		}
	}
	return out
}

// resolve maps a frame's path (absolute, package-relative or a bare name)
// to a path in the repository that an observation has named.
func (s *state) resolve(p string) (string, bool) {
	var known []string
	seen := map[string]bool{}
	addKnown := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			known = append(known, k)
		}
	}
	for k := range s.models {
		addKnown(k)
	}
	for _, d := range s.diffs {
		addKnown(d.NewPath)
	}
	for _, ps := range s.found {
		for _, k := range ps {
			addKnown(k)
		}
	}
	sort.Strings(known)
	var matches []string
	for _, k := range known {
		if k == p || strings.HasSuffix(p, "/"+k) || strings.HasSuffix(k, "/"+p) {
			matches = append(matches, k)
		}
	}
	if len(matches) == 0 {
		return "", false
	}
	if len(matches) > 1 && len(s.failures) > 0 {
		// Prefer the file in the failing test's package.
		pkg := s.failures[0].Package
		for _, k := range matches {
			if d := path.Dir(k); d != "." && strings.HasSuffix(pkg, "/"+d) {
				return k, true
			}
		}
	}
	return matches[0], true
}

// ---- building ----

func (s *state) build() {
	s.built = true
	var frames []location
	for _, fr := range s.frameRefs() {
		if p, ok := s.resolve(fr.path); ok && isGoSource(p) {
			frames = append(frames, location{p, fr.line})
		}
	}
	s.cands = rank(evidence{models: s.models, diffs: s.diffs, frames: frames, called: s.called,
		spectrum: s.spectrum(), named: s.messageNames(), got: s.gotValues()})
	for p, m := range s.models {
		s.pristine[p] = append([]string(nil), m.lines...)
	}
	s.p.log.Debug("candidates", zap.String("task", s.task.ID), zap.Int("count", len(s.cands)))
}
