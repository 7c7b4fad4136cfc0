package ingest

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
)

// handled submits s and returns the submission the handler sees.
func handled(t *testing.T, in *Intake, s Submission) Submission {
	t.Helper()
	submit(t, in, s)
	got := make(chan Submission, 1)
	run(t, in, func(_ context.Context, s Submission, _ Attempt) error {
		got <- s
		return nil
	})
	return testsvc.Receive(t, time.Minute, "the submission is handled", got)
}

// The report parsed when the intake accepted it reaches triage with the
// submission, and Checked takes it as it is: triage does not parse again
// (a raw report the parser would now reject is triaged all the same). The
// raw report travels along, for audit.
func TestParsedReportTravelsWithTheSubmission(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	in := openIntake(t, js, testConfig())
	s := submission("/repos/parsed")
	s.ID = "parsed-1"
	res, err := Check(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) == 0 {
		t.Fatalf("the test report has no failure: %+v", res)
	}
	s.Parsed = ForTriage(res)
	// The parser has changed its mind since: the raw report is now one it
	// rejects.
	s.Report = []byte("not a report any parser accepts")
	got := handled(t, in, s)
	if got.Parsed == nil || got.ParsedObject != "" {
		t.Fatalf("handler saw parsed %v, object %q", got.Parsed, got.ParsedObject)
	}
	if !bytes.Equal(got.Report, s.Report) {
		t.Errorf("the raw report was not kept: %q", got.Report)
	}
	rep, err := Checked(got)
	if err != nil {
		t.Fatalf("Checked parsed again: %v", err)
	}
	if rep.Format != res.Format || len(rep.Failures) != len(res.Failures) || !reflect.DeepEqual(rep.Failures, res.Failures) {
		t.Errorf("Checked = %+v, want the intake's %+v", rep, res)
	}
	if len(rep.Passed) != 0 || rep.Runs != nil {
		t.Errorf("the parsed form carries what triage does not read: %d passed, runs %v", len(rep.Passed), rep.Runs)
	}
	// Without a parsed form (an older message), Checked parses.
	got.Parsed = nil
	if _, err := Checked(got); !errors.Is(err, ErrInvalid) {
		t.Errorf("Checked without a parsed form: %v, want the parser's rejection", err)
	}
	// Checked still holds a submission to what a report needs.
	got.Parsed, got.Commit = ForTriage(res), ""
	if _, err := Checked(got); !errors.Is(err, ErrInvalid) {
		t.Errorf("Checked with no commit: %v", err)
	}
}

// A parsed form too large for the message goes to the object store with
// the report, and comes back whole.
func TestLargeParsedReportGoesThroughTheObjectStore(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	in := openIntake(t, js, testConfig())
	s := submission("/repos/bigparsed")
	s.ID = "bigparsed-1"
	res, err := Check(s)
	if err != nil {
		t.Fatal(err)
	}
	big := bigReport(int(js.Conn().MaxPayload()))
	for len(res.Failures) < 2000 {
		f := res.Failures[0]
		f.Output = string(big[:1000])
		res.Failures = append(res.Failures, f)
	}
	s.Parsed = ForTriage(res)
	got := handled(t, in, s)
	if got.Parsed == nil || len(got.Parsed.Failures) != len(res.Failures) || got.ParsedObject != "bigparsed-1.parsed" {
		t.Fatalf("handler saw object %q and %v", got.ParsedObject, got.Parsed != nil)
	}
	testsvc.Poll(t, 30*time.Second, "the parsed report's object is removed after triage", func() bool {
		_, err := in.blobs.GetInfo(context.Background(), "bigparsed-1.parsed")
		return errors.Is(err, jetstream.ErrObjectNotFound)
	})
}

// A parsed report that would fit in the message but not in its header
// (JetStream refuses a header over 64 KB) goes through the object store.
func TestParsedReportTooLargeForAHeaderGoesThroughTheObjectStore(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	in := openIntake(t, js, testConfig())
	s := submission("/repos/midparsed")
	s.ID = "midparsed-1"
	res, err := Check(s)
	if err != nil {
		t.Fatal(err)
	}
	for len(res.Failures) < 80 {
		f := res.Failures[0]
		f.Output = strings.Repeat("o", 1000)
		res.Failures = append(res.Failures, f)
	}
	s.Parsed = ForTriage(res)
	got := handled(t, in, s)
	if got.Parsed == nil || len(got.Parsed.Failures) != len(res.Failures) || got.ParsedObject != "midparsed-1.parsed" {
		t.Fatalf("handler saw object %q and %v", got.ParsedObject, got.Parsed != nil)
	}
}
