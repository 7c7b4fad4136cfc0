package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
)

// bigReport is a valid go test -json report of about n bytes: many passing
// tests with output, and one failure.
func bigReport(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"Action":"run","Package":"example.com/big","Test":"TestPass%d"}`+"\n", i)
		fmt.Fprintf(&b, `{"Action":"output","Package":"example.com/big","Test":"TestPass%d","Output":"%s\n"}`+"\n", i, strings.Repeat("x", 200))
		fmt.Fprintf(&b, `{"Action":"pass","Package":"example.com/big","Test":"TestPass%d","Elapsed":0}`+"\n", i)
	}
	b.WriteString(strings.TrimPrefix(goTestReport, ""))
	return b.Bytes()
}

// A report larger than the server's max_payload is stored in the object
// store and referenced from its message; the handler sees it whole, and
// the object is removed once the submission is triaged.
func TestLargeReportGoesThroughTheObjectStore(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	in := openIntake(t, js, testConfig())
	maxPayload := int(js.Conn().MaxPayload())
	rep := bigReport(5 << 20)
	if len(rep) <= maxPayload {
		t.Fatalf("report of %d bytes is not larger than max_payload %d", len(rep), maxPayload)
	}
	s := submission("/repos/big")
	s.ID, s.Report = "big-1", rep
	if _, err := Check(s); err != nil {
		t.Fatalf("the big report does not parse: %v", err)
	}
	if dup := submit(t, in, s); dup {
		t.Fatal("duplicate")
	}
	got := make(chan Submission, 1)
	run(t, in, func(_ context.Context, s Submission, _ Attempt) error {
		got <- s
		return nil
	})
	if s := testsvc.Receive(t, 30*time.Second, "the big submission is handled", got); !bytes.Equal(s.Report, rep) {
		t.Fatalf("handler saw %d bytes, want the %d posted", len(s.Report), len(rep))
	}
	testsvc.Poll(t, 30*time.Second, "the report object is removed after triage", func() bool {
		_, err := in.blobs.GetInfo(context.Background(), "big-1")
		return errors.Is(err, jetstream.ErrObjectNotFound)
	})
}

// A small report stays in its message.
func TestSmallReportStaysInline(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	in := openIntake(t, js, testConfig())
	s := submission("/repos/small")
	s.ID = "small-1"
	submit(t, in, s)
	if _, err := in.blobs.GetInfo(context.Background(), "small-1"); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("a small report went to the object store: %v", err)
	}
}
