package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/report"
)

// Every kind of submission comes back whole from its message, in the
// framed encoding and in the whole-JSON one the stream held before.
func TestDecodeReadsBothEncodings(t *testing.T) {
	received := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	cases := map[string]Submission{
		"go test -json":             submission("/repos/calc"),
		"a report that is not text": {ID: "bin", Repo: "r", Commit: "c", Report: []byte("\n\x00{\"x\":1}\n\xff\n"), Received: received},
		"parsed JUnit": {ID: "junit", Repo: "r", Commit: "c", Branch: "ma\nin ✓\x7f\t", Report: []byte("<testsuites/>\n"),
			Parsed: &report.Result{Format: "junit", Total: 3}, Received: received},
		"a report kept in the object store": {ID: "big", Repo: "r", Commit: "c", ReportObject: "big", Received: received},
		"a forge's delivery": {ID: "d-1", Kind: "github", Event: "workflow_run", Repo: "o/r",
			Payload: json.RawMessage(`{"action":"completed","note":"line\nbreak"}`), Verified: true, Received: received},
	}
	for name, s := range cases {
		data, hdr, err := encode(s)
		if err != nil {
			t.Fatalf("%s: encode: %v", name, err)
		}
		body := s.Report
		if s.IsEvent() {
			body = s.Payload
		}
		if !bytes.Equal(data, body) || hdr.Get(HeaderSubmission) == "" {
			t.Fatalf("%s: the message's data is not the body as it came: %q", name, data)
		}
		got, err := Decode(data, hdr)
		if err != nil || !reflect.DeepEqual(got, s) {
			t.Fatalf("%s: framed: decoded %+v (%v), want %+v", name, got, err, s)
		}
		whole, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Decode(whole, nil); err != nil || !reflect.DeepEqual(got, s) {
			t.Fatalf("%s: whole JSON: decoded %+v (%v), want %+v", name, got, err, s)
		}
	}
	// A forge's delivery of any size (its payload is the message's data),
	// and an envelope too large for a header (JetStream refuses one over
	// 64 KB): the submission goes whole as JSON.
	big := Submission{ID: "big-parsed", Repo: "r", Commit: "c", Report: []byte("<testsuites/>"),
		Parsed: &report.Result{Format: "junit", Incomplete: []string{strings.Repeat("p", 2*maxEnvelope)}}}
	for _, s := range []Submission{
		{ID: "d-2", Kind: "github", Event: "push", Repo: "o/r", Payload: json.RawMessage(`{"x":"` + strings.Repeat("a", 300<<10) + `"}`)},
		big,
	} {
		data, hdr, err := encode(s)
		if err != nil || len(hdr.Get(HeaderSubmission)) > maxEnvelope {
			t.Fatalf("%s: header of %d bytes (%v)", s.ID, len(hdr.Get(HeaderSubmission)), err)
		}
		if got, err := Decode(data, hdr); err != nil || !reflect.DeepEqual(got, s) {
			t.Fatalf("%s: decoded %v", s.ID, err)
		}
	}
	if _, err := Decode([]byte(goTestReport), nats.Header{HeaderSubmission: {"not json"}}); err == nil {
		t.Error("a message whose submission header is not JSON decoded without an error")
	}
}

// The stream stores the report's bytes as CI posted them, not base64
// inside JSON, and the submission's other fields in a header that the
// server and client read back (control characters and DEL included).
func TestSubmitStoresTheReportAsPosted(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	in := openIntake(t, js, testConfig())
	s := submission("/repos/calc")
	s.Branch = "fix/\x7f\x01\ttab\nline ✓"
	submit(t, in, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Data, s.Report) {
		t.Fatalf("stored %q for the report %q", m.Data, s.Report)
	}
	if h := m.Header.Get(HeaderSubmission); bytes.IndexByte([]byte(h), 0x7f) >= 0 {
		t.Fatalf("the submission header holds a DEL: %q", h)
	}
	got, err := Decode(m.Data, m.Header)
	if err != nil || got.Repo != s.Repo || got.Branch != s.Branch {
		t.Fatalf("read back %+v (%v), want the branch %q", got, err, s.Branch)
	}
}
