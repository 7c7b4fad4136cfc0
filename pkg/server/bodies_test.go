package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/ingest"
)

// Report buffers are reused between requests: every report posted at once,
// all of one length, must reach the stream as it was posted, under the ID
// of its own content. A buffer handed to the next request before the
// report it held was stored would show here as a report stored under
// another's ID (and, under -race, as a race).
func TestPostedReportsReachTheStreamIntact(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	js := embeddedtest.JetStream(t)
	in, err := ingest.Open(ctx, js, ingest.Config{}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	s := New(in, memTasks{}, prometheus.NewRegistry(), Options{Allow: mustAllow(t, "/r")}, zap.NewNop())
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	srv := hs.URL

	const posters, each = 8, 40
	report := func(i int) string { return strings.ReplaceAll(goodReport, "TestX", fmt.Sprintf("Test%05d", i)) }
	var wg sync.WaitGroup
	errs := make(chan error, posters*each)
	for p := range posters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range each {
				i := p*each + k
				resp, err := http.Post(srv+"/api/v1/reports?repo=/r&commit=abc", "application/json", strings.NewReader(report(i)))
				if err != nil {
					errs <- err
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					errs <- fmt.Errorf("report %d: %s", i, resp.Status)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	st, err := js.Stream(ctx, ingest.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	posted := map[string]bool{}
	for i := range posters * each {
		posted[report(i)] = true
	}
	for seq := uint64(1); seq <= posters*each; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		sub, err := ingest.Decode(m.Data, m.Header)
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		if id := ingest.ContentID(sub); id != sub.ID {
			t.Fatalf("message %d is stored under ID %s but its report is %s's:\n%s", seq, sub.ID, id, sub.Report)
		}
		if !posted[string(sub.Report)] {
			t.Fatalf("message %d holds a report nobody posted (or one twice):\n%s", seq, sub.Report)
		}
		delete(posted, string(sub.Report))
	}
	if len(posted) != 0 {
		t.Fatalf("%d reports posted and not stored", len(posted))
	}
}
