package triage

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/repourl"
	"github.com/redfix/redfix/pkg/series"
	"github.com/redfix/redfix/pkg/task"
)

// scriptedTriage answers every report with err, or with one queued group.
type scriptedTriage struct {
	err   error
	calls int
}

func (s *scriptedTriage) Process(_ context.Context, in Input) ([]Outcome, error) {
	s.calls++
	if s.err != nil {
		return nil, s.err
	}
	return []Outcome{{TaskID: "t-" + in.Submission, Status: task.StatusQueued}}, nil
}

// recorded keeps what the intake recorded.
type recorded struct {
	counts  []series.Count
	failed  []string // classes
	decided []Outcome
}

func (r *recorded) Count(_ context.Context, counts ...series.Count) {
	r.counts = append(r.counts, counts...)
}
func (r *recorded) TriageFailed(_ context.Context, _ ingest.Submission, class string, _ error) {
	r.failed = append(r.failed, class)
}
func (r *recorded) TriageDecided(_ context.Context, _ ingest.Submission, o Outcome) {
	r.decided = append(r.decided, o)
}

// deliveryWithoutRun is a forge's event that is not a run to triage.
type deliveryWithoutRun struct{}

func (deliveryWithoutRun) Process(context.Context, ingest.Submission) (forge.Processed, error) {
	return forge.Processed{Note: "fix reviewed"}, nil
}

type noTasks struct{}

func (noTasks) GetTask(_ context.Context, id string) (task.Task, error) {
	return task.Task{}, fmt.Errorf("task %s: %w", id, task.ErrNotFound)
}

func newIntake(t *testing.T, tr *scriptedTriage) (*Intake, *recorded) {
	t.Helper()
	allow, err := repourl.NewAllowlist("/srv/repo")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorded{}
	return &Intake{Triage: tr, Events: map[string]Events{"github": deliveryWithoutRun{}}, Allow: allow, Record: rec, Waits: &Waits{Tasks: noTasks{}}}, rec
}

func report1(id string) ingest.Submission {
	return ingest.Submission{ID: id, Repo: "/srv/repo", Commit: "abc123", Report: []byte("{}"),
		Parsed: ingest.ForTriage(report.Result{Format: "go-test-json", Total: 1})}
}

// A report whose repository is answered as missing is retried, and parked
// as untriageable on its third attempt, however many more the stream would
// give it; its waiter hears why.
func TestIntakeParksAnsweredReportsAfterThreeAttempts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr := &scriptedTriage{err: fmt.Errorf("clone: %w", gitrepo.ErrNoRepository)}
	in, rec := newIntake(t, tr)
	w := in.Waits.Expect("r1")
	defer w.Release()
	for n := 1; n <= untriageableAttempts; n++ {
		err := in.process(ctx, report1("r1"), ingest.Attempt{N: n})
		if err == nil {
			t.Fatalf("attempt %d: no error", n)
		}
		parked := errors.Is(err, ingest.ErrUntriageable)
		if parked != (n == untriageableAttempts) {
			t.Fatalf("attempt %d: %v; want it parked on attempt %d only", n, err, untriageableAttempts)
		}
	}
	if len(rec.failed) != 1 || rec.failed[0] != "gave_up" {
		t.Errorf("recorded failures %v, want one gave_up", rec.failed)
	}
	if _, err := w.Wait(ctx); !errors.Is(err, ingest.ErrUntriageable) {
		t.Errorf("the waiter heard %v, want the untriageable error", err)
	}
	if in.Waits.Held() != 0 {
		t.Errorf("%d settlements held after the wait", in.Waits.Held())
	}

	// Another failure is not the other side's answer: retried until the
	// stream's last attempt, then given up.
	tr.err = errors.New("go: network unreachable")
	if err := in.process(ctx, report1("r2"), ingest.Attempt{N: untriageableAttempts}); err == nil || errors.Is(err, ingest.ErrUntriageable) {
		t.Errorf("a transient failure: %v, want it retried", err)
	}
	if err := in.process(ctx, report1("r2"), ingest.Attempt{N: 9, Last: true}); err == nil || errors.Is(err, ingest.ErrUntriageable) {
		t.Errorf("the last attempt: %v, want it given up, not untriageable", err)
	}
	if len(rec.failed) != 2 {
		t.Errorf("recorded failures %v, want the give-up counted", rec.failed)
	}

	// A server that answered, in whatever words, is an answer; one that
	// could not be reached is not.
	for _, c := range []struct {
		err    error
		parked bool
	}{
		{fmt.Errorf("clone git://h/x: %w", gitrepo.ErrUnfetchable), true},
		{fmt.Errorf("clone git://h/x: %w", gitrepo.ErrUnreachable), false},
	} {
		tr.err = c.err
		err := in.process(ctx, report1("r3"), ingest.Attempt{N: untriageableAttempts})
		if errors.Is(err, ingest.ErrUntriageable) != c.parked {
			t.Errorf("%v on attempt %d: %v, want parked %v", c.err, untriageableAttempts, err, c.parked)
		}
	}
}

// A report the API's rules refuse is invalid at once, and triage never
// sees it; a GitHub delivery that is not a run settles with nothing
// triaged; a triaged report counts (accepted on its first delivery) and
// hands its tasks to its waiter.
func TestIntakeSettlesEachSubmission(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr := &scriptedTriage{}
	in, rec := newIntake(t, tr)

	bad := report1("bad")
	bad.Repo = "/elsewhere"
	if err := in.process(ctx, bad, ingest.Attempt{N: 1}); !errors.Is(err, ingest.ErrInvalid) {
		t.Errorf("a repository outside the allowlist: %v, want invalid", err)
	}
	if tr.calls != 0 || len(rec.failed) != 1 || rec.failed[0] != "invalid" {
		t.Errorf("triage calls %d, failures %v; want none and one invalid", tr.calls, rec.failed)
	}

	w := in.Waits.Expect("gh-1")
	if err := in.process(ctx, ingest.Submission{ID: "gh-1", Kind: "github"}, ingest.Attempt{N: 1}); err != nil {
		t.Fatal(err)
	}
	if tasks, err := w.Wait(ctx); err != nil || len(tasks) != 0 || tr.calls != 0 {
		t.Errorf("a delivery that is not a run: tasks %v, err %v, triage calls %d", tasks, err, tr.calls)
	}

	if err := in.process(ctx, report1("ok"), ingest.Attempt{N: 1}); err != nil {
		t.Fatal(err)
	}
	if len(rec.decided) != 1 || rec.decided[0].TaskID != "t-ok" {
		t.Errorf("decided %+v", rec.decided)
	}
	// A posted report is counted as accepted on its first delivery only
	// (the ingest API counts nothing on its request path).
	if n := len(rec.counts); n != 2 || rec.counts[0].Event != series.EventReportAccepted || rec.counts[0].Repo != "/srv/repo" || rec.counts[1].Event != series.EventReportTriaged {
		t.Errorf("counts %+v, want the report accepted and triaged", rec.counts)
	}
	if err := in.process(ctx, report1("ok"), ingest.Attempt{N: 2}); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.counts); n != 3 || rec.counts[2].Event != series.EventReportTriaged {
		t.Errorf("counts %+v, want a redelivery triaged, not accepted again", rec.counts)
	}
	// An event of a kind no configured forge takes is invalid: parked.
	w = in.Waits.Expect("other-1")
	if err := in.process(ctx, ingest.Submission{ID: "other-1", Kind: "elsewhere", Event: "x", Payload: []byte("{}")}, ingest.Attempt{N: 1}); !errors.Is(err, ingest.ErrInvalid) {
		t.Errorf("an event no forge takes: %v, want invalid", err)
	}
	if _, err := w.Wait(ctx); err == nil || len(rec.failed) != 2 || rec.failed[1] != "invalid" || tr.calls != 2 {
		t.Errorf("an event no forge takes: waiter heard %v, failures %v, triage calls %d", err, rec.failed, tr.calls)
	}
}
