package triage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/repourl"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/series"
)

// Submissions are the stored reports, consumed slots at a time
// (ingest.Intake).
type Submissions interface {
	RunSlots(ctx context.Context, slots int, handle ingest.Handler) error
}

// Events turns a forge's stored event into what there is to triage: a
// failed run's report, or nothing (an outcome recorded, a command
// answered) (a forge driver's processor of its stored deliveries).
type Events interface {
	Process(ctx context.Context, sub ingest.Submission) (forge.Processed, error)
}

// Recorder keeps what became of the reports for the dashboard
// (history.Recorder).
type Recorder interface {
	Count(ctx context.Context, counts ...series.Count)
	// TriageFailed keeps a report settled without being triaged; class is
	// invalid or gave_up.
	TriageFailed(ctx context.Context, sub ingest.Submission, class string, err error)
	TriageDecided(ctx context.Context, sub ingest.Submission, o Outcome)
}

// Intake triages the stored submissions until its context ends. A forge's
// event becomes its failed run's report first; every report is held to
// the ingest API's rules again (whatever route stored it), triaged, and
// what came of it counted and recorded. A report whose repository or
// commit cannot be fetched although its server answered (or that a local
// path does not hold) is parked after untriageableAttempts tries; one
// whose server cannot be reached is retried as any failure is.
type Intake struct {
	Reports Submissions
	// Slots is how many reports are triaged at once: never more than the
	// CPUs, and the CPUs when 0.
	Slots  int
	Triage interface {
		Process(ctx context.Context, in Input) ([]Outcome, error)
	}
	// Events are the forges' stored events, by the kind their webhooks
	// store them as (the forge driver's name).
	Events map[string]Events
	// Allow is the ingest API's allowlist.
	Allow  *repourl.Allowlist
	Record Recorder
	// Metrics, when set, count the reports and groups triaged.
	Metrics *Metrics
	// Waits, when set, hear how the triage of the submissions they wait
	// for ended.
	Waits *Waits
	// OnOutcome, when set, hears of every group's outcome.
	OnOutcome func(Outcome)
	// Verdicts, when set, shows each report's outcomes on its red commit.
	Verdicts Verdicts
}

// untriageableAttempts is how many times a report whose repository or
// commit is answered as missing is tried before it is parked.
const untriageableAttempts = 3

// answered reports an error that is the other side's answer rather than a
// failure to ask: the repository's server took the connection and the
// repository or the commit could not be fetched from it, whatever it said
// (gitrepo.ErrUnfetchable); a local path holds no repository; the commit
// is not in what was fetched.
func answered(err error) bool {
	return errors.Is(err, gitrepo.ErrUnfetchable) || errors.Is(err, gitrepo.ErrNoRepository) || errors.Is(err, gitrepo.ErrUnknownRevision)
}

// Run triages stored submissions until ctx ends.
func (in *Intake) Run(ctx context.Context) error {
	return in.Reports.RunSlots(ctx, slots(in.Slots), in.process)
}

// process triages one stored submission. Its error asks the stream for a
// redelivery, or parks the submission (ingest.ErrInvalid,
// ingest.ErrUntriageable).
func (in *Intake) process(ctx context.Context, sub ingest.Submission, a ingest.Attempt) error {
	id := sub.ID
	posted := sub.Kind == ingest.KindReport
	release := func(context.Context) {}
	if sub.IsEvent() {
		// A forge's event: a failed run becomes its report, to triage like
		// one CI posted; an outcome is recorded and that is all.
		run, rel, err := in.event(ctx, sub, a)
		if err != nil || run == nil {
			return err
		}
		sub, release = *run, rel
	}
	// The API checked these already; a message stored by another route
	// or an older version is held to the same rules here.
	err := ingest.Canonicalize(&sub)
	if err == nil {
		if aerr := ingest.Admit(sub, in.Allow); aerr != nil {
			err = fmt.Errorf("%w: %w", ingest.ErrInvalid, aerr)
		}
	}
	var rep report.Result
	if err == nil {
		// The report as the intake parsed it: not parsed again.
		rep, err = ingest.Checked(sub)
	}
	if err != nil {
		release(context.WithoutCancel(ctx))
		in.failed(ctx, sub, err)
		in.Waits.settle(id, settlement{err: err})
		return err
	}
	if posted && a.N == 1 {
		// Posted to the ingest API, which counts nothing on its request
		// path (a 2xx waits for the stream alone): counted here, on the
		// first delivery, once the API's rules held.
		in.Record.Count(ctx, series.Count{Event: series.EventReportAccepted, Repo: sub.Repo})
	}
	ctx = sandbox.WithRepo(ctx, sub.Repo)
	began := time.Now()
	outs, err := in.Triage.Process(ctx, Input{Repo: sub.Repo, Commit: sub.Commit, Good: sub.Good, Branch: sub.Branch, Fork: sub.Fork, Report: rep,
		Submission: sub.ID, Received: sub.Received})
	if ctx.Err() == nil {
		result := "triaged"
		if err != nil {
			result = "failed"
		}
		in.Metrics.took(result, time.Since(began))
	}
	var ids []string
	for _, o := range outs {
		in.Metrics.decided(o)
		in.Record.TriageDecided(context.WithoutCancel(ctx), sub, o)
		if in.OnOutcome != nil {
			in.OnOutcome(o)
		}
		if o.TaskID != "" {
			ids = append(ids, o.TaskID)
		}
	}
	if in.Verdicts != nil && len(outs) > 0 {
		// The groups decided so far, also when triage stopped before the
		// rest: shown again, with the rest, on the report's redelivery.
		in.Verdicts.Decided(context.WithoutCancel(ctx), sub.Repo, outs)
	}
	if err != nil {
		if answered(err) && a.N >= untriageableAttempts && ctx.Err() == nil {
			// The repository or the commit is not there, and said so
			// this many times: parked now, not retried for a day while
			// it takes its turns from reports that can be triaged.
			a.Last = true
			err = fmt.Errorf("%w after %d attempts: %w", ingest.ErrUntriageable, a.N, err)
		}
		if a.Last && ctx.Err() == nil {
			release(context.WithoutCancel(ctx))
			if !errors.Is(err, ingest.ErrUntriageable) {
				err = fmt.Errorf("triage gave up after %d attempts: %w", a.N, err)
			}
			in.failed(ctx, sub, err)
			in.Waits.settle(id, settlement{err: err})
		}
		return err
	}
	in.Metrics.settled("triaged")
	in.Record.Count(context.WithoutCancel(ctx), series.Count{Event: series.EventReportTriaged, Repo: sub.Repo})
	in.Waits.settle(id, settlement{tasks: ids})
	return nil
}

// event processes a forge's stored event through its driver: the report
// of the failed run it brings, to triage, and the release of the run's
// claim; no report when the event is settled (or failed) here.
func (in *Intake) event(ctx context.Context, sub ingest.Submission, a ingest.Attempt) (*ingest.Submission, func(context.Context), error) {
	ev, ok := in.Events[sub.Kind]
	var (
		res forge.Processed
		err error
	)
	if ok {
		res, err = ev.Process(ctx, sub)
	} else {
		err = fmt.Errorf("%w: no forge takes events of kind %q", ingest.ErrInvalid, sub.Kind)
	}
	if err != nil {
		if errors.Is(err, ingest.ErrInvalid) || a.Last && ctx.Err() == nil {
			in.failed(ctx, sub, err)
			in.Waits.settle(sub.ID, settlement{err: err})
		}
		return nil, nil, err
	}
	if res.Report == nil {
		in.Waits.settle(sub.ID, settlement{})
		return nil, nil, nil
	}
	r := res.Report
	run := &ingest.Submission{ID: r.ID, Repo: r.Repo, Commit: r.Commit, Good: r.Good, Branch: r.Branch, Fork: r.Fork, Report: r.Data, Parsed: r.Parsed,
		Verified: true} // the webhook's signature was checked before it was stored
	if a.N == 1 {
		// The run's report is stored for triage, as a posted one.
		in.Record.Count(ctx, series.Count{Event: series.EventReportAccepted, Repo: run.Repo})
	}
	release := res.Release
	if release == nil {
		release = func(context.Context) {}
	}
	return run, release, nil
}

// failed counts a report triage settled without triaging it: invalid (it
// never can be) or gave_up (its last attempt failed).
func (in *Intake) failed(ctx context.Context, sub ingest.Submission, err error) {
	result := "gave_up"
	if errors.Is(err, ingest.ErrInvalid) {
		result = "invalid"
	}
	in.Metrics.settled(result)
	in.Record.TriageFailed(context.WithoutCancel(ctx), sub, result, err)
}
