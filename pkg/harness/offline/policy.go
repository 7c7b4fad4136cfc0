// Package offline is the policy redfix uses when no model is configured. It
// repairs without one, by the same actions a model would take: it reads the
// task and the blame commit, reproduces the failure, reads the suspicious
// code, then tries small edits from repair templates (flipped comparisons,
// signs, off-by-one constants, boolean conditions, undoing a blame hunk) one
// at a time, running the failing tests after each and undoing each that does
// not make them pass.
//
// The policy sees only observations, never the workspace: everything it
// knows of a file comes from the lines read_file and go_to_line showed. It
// reads observations by their structured parts, never by their text.
package offline

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/lang"
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
	langs    languages
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

// New returns an offline policy that repairs the files of the languages
// of drivers, those that implement Language; a file none of them owns is
// no template's target.
func New(log *zap.Logger, drivers []lang.Driver, opts ...Option) *Policy {
	if log == nil {
		log = zap.NewNop()
	}
	p := &Policy{log: log.Named("offline"), langs: languagesOf(drivers), maxFiles: DefaultMaxFiles}
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
		st.observe(s, ep.Kind(s.Action.Name))
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
