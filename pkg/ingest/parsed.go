package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/redfix/redfix/pkg/report"
)

// ForTriage is the part of a parsed report that triage reads, carried on
// the submission so that triage does not parse the report again: the
// passing tests' names and the run counts are left out (triage does not
// read them, and a large suite's would crowd the message).
func ForTriage(res report.Result) *report.Result {
	res.Passed, res.Runs = nil, nil
	return &res
}

// Checked is Check for a submission as triage takes it from the stream: the
// report the intake parsed when it accepted the submission (Parsed), checked
// again for what a report needs but not parsed again; a submission that
// carries no parsed report (a forge's delivery's, a message stored by an
// older version) is parsed here.
func Checked(s Submission) (report.Result, error) {
	if s.Parsed == nil || s.Kind != KindReport {
		return Check(s)
	}
	switch {
	case s.Repo == "":
		return report.Result{}, fmt.Errorf("%w: no repository", ErrInvalid)
	case s.Commit == "":
		return report.Result{}, fmt.Errorf("%w: no commit", ErrInvalid)
	}
	return *s.Parsed, nil
}

// parsedKey names the object that holds a submission's parsed report when
// it does not fit in the message.
func parsedKey(id string) string { return id + ".parsed" }

// stashParsed moves s's parsed report to the object store when the message
// would not fit.
func (in *Intake) stashParsed(ctx context.Context, s *Submission) error {
	if s.Parsed == nil {
		return nil
	}
	data, err := json.Marshal(s.Parsed)
	if err != nil {
		return fmt.Errorf("encode the parsed report of submission %s: %w", s.ID, err)
	}
	// Inline, the parsed form travels in the message's header (encode),
	// which must stay small, beside the report.
	if len(data) <= maxEnvelope/2 && len(data)+len(s.Report) <= in.MaxMessageReport() {
		return nil
	}
	if _, err := in.blobs.PutBytes(ctx, parsedKey(s.ID), data); err != nil {
		return fmt.Errorf("store the parsed report of submission %s (%d bytes) in the object store: %w", s.ID, len(data), err)
	}
	s.ParsedObject, s.Parsed = parsedKey(s.ID), nil
	return nil
}

// fetchParsed puts a stashed parsed report back into s.
func (in *Intake) fetchParsed(ctx context.Context, s *Submission) error {
	if s.ParsedObject == "" {
		return nil
	}
	data, err := in.blobs.GetBytes(ctx, s.ParsedObject)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		// The raw report is still there: triage parses it.
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the parsed report object %s of submission %s: %w", s.ParsedObject, s.ID, err)
	}
	var res report.Result
	if err := json.Unmarshal(data, &res); err != nil {
		return fmt.Errorf("%w: the parsed report object %s of submission %s: %w", ErrInvalid, s.ParsedObject, s.ID, err)
	}
	s.Parsed = &res
	return nil
}
