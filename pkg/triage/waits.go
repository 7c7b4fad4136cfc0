package triage

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

// Tasks reads the tasks a triage made (store.Store).
type Tasks interface {
	GetTask(ctx context.Context, id string) (task.Task, error)
}

// Waits are the submissions whose triage someone waits for (the demo, the
// tests). The intake records how a triage ended only for these, so a bot
// that serves, where nobody waits, keeps nothing per report.
type Waits struct {
	// Tasks is where Wait reads the tasks a triage made.
	Tasks Tasks

	mu sync.Mutex
	m  map[string]*waiter // by submission id, until settled or given up
}

// settlement is how the triage of one submission ended.
type settlement struct {
	tasks []string
	err   error
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
	ws   *Waits
	id   string
	w    *waiter
	once sync.Once
}

// Expect registers a wait for the triage of the submission with id: its
// settlement is kept until Wait returns or Release is called.
func (ws *Waits) Expect(submission string) *Expectation {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.m == nil {
		ws.m = map[string]*waiter{}
	}
	w := ws.m[submission]
	if w == nil {
		w = &waiter{done: make(chan struct{})}
		ws.m[submission] = w
	}
	w.n++
	return &Expectation{ws: ws, id: submission, w: w}
}

// Release gives the wait up; the settlement is no longer kept for it.
// Calling it again does nothing.
func (e *Expectation) Release() {
	e.once.Do(func() {
		ws := e.ws
		ws.mu.Lock()
		defer ws.mu.Unlock()
		e.w.n--
		if e.w.n == 0 && ws.m[e.id] == e.w {
			delete(ws.m, e.id)
		}
	})
}

// settle hands the triage's end to those who wait for the submission, if
// anyone does; otherwise it is forgotten at once. A nil Waits waits for
// nothing.
func (ws *Waits) settle(id string, st settlement) {
	if ws == nil {
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.m[id]
	if w == nil {
		return
	}
	delete(ws.m, id)
	w.st = st
	close(w.done)
}

// Held is how many submissions are waited for.
func (ws *Waits) Held() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.m)
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
			t, err := e.ws.Tasks.GetTask(ctx, id)
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
