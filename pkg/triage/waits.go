package app

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

// settlement is how the triage of one submission ended.
type settlement struct {
	tasks []string
	err   error
}

// waits are the submissions whose triage someone waits for. The triage
// loop records a settlement only for these, so a bot that serves, where
// nobody waits, keeps nothing per report.
type waits struct {
	mu sync.Mutex
	m  map[string]*waiter // by submission id, until settled or given up
}

// waiter is one submission's settlement and the expectations sharing it.
type waiter struct {
	n    int           // expectations not yet released
	done chan struct{} // closed once st is set
	st   settlement
}

// Expectation is a wait for one submission's triage, registered before the
// submission is sent so that a triage that ends first is not missed.
type Expectation struct {
	s    *System
	id   string
	w    *waiter
	once sync.Once
}

// Expect registers a wait for the triage of the submission with id: its
// settlement is kept until Wait returns or Release is called.
func (s *System) Expect(submission string) *Expectation {
	s.waits.mu.Lock()
	defer s.waits.mu.Unlock()
	if s.waits.m == nil {
		s.waits.m = map[string]*waiter{}
	}
	w := s.waits.m[submission]
	if w == nil {
		w = &waiter{done: make(chan struct{})}
		s.waits.m[submission] = w
	}
	w.n++
	return &Expectation{s: s, id: submission, w: w}
}

// Release gives the wait up; the settlement is no longer kept for it.
// Calling it again does nothing.
func (e *Expectation) Release() {
	e.once.Do(func() {
		ws := &e.s.waits
		ws.mu.Lock()
		defer ws.mu.Unlock()
		e.w.n--
		if e.w.n == 0 && ws.m[e.id] == e.w {
			delete(ws.m, e.id)
		}
	})
}

// settle hands the triage's end to those who wait for the submission, if
// anyone does; otherwise it is forgotten at once.
func (s *System) settle(id string, st settlement) {
	s.waits.mu.Lock()
	defer s.waits.mu.Unlock()
	w := s.waits.m[id]
	if w == nil {
		return
	}
	delete(s.waits.m, id)
	w.st = st
	close(w.done)
}

// heldSettlements is how many submissions are waited for.
func (s *System) heldSettlements() int {
	s.waits.mu.Lock()
	defer s.waits.mu.Unlock()
	return len(s.waits.m)
}

// Wait waits until the submission has been triaged and each task it made
// has reached a final status, and returns those tasks. It releases the
// expectation when it returns.
func (e *Expectation) Wait(ctx context.Context) ([]task.Task, error) {
	defer e.Release()
	select {
	case <-e.w.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for triage of %s: %w", e.id, ctx.Err())
	}
	if e.w.st.err != nil {
		return nil, e.w.st.err
	}
	ids := e.w.st.tasks
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		var tasks []task.Task
		done := true
		for _, id := range ids {
			t, err := e.s.Store.GetTask(ctx, id)
			if err != nil {
				return nil, fmt.Errorf("wait for task %s: %w", id, err)
			}
			tasks = append(tasks, t)
			done = done && t.Status.Final()
		}
		if done {
			return tasks, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for tasks %s: %w", strings.Join(ids, ", "), ctx.Err())
		}
	}
}
