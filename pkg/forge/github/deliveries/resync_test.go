package deliveries

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/ingest"
)

func TestResync(t *testing.T) {
	ex := ghtest.WebhookPayloads(t)
	f := newGHFixture(t)
	ctx := context.Background()
	js := embeddedtest.JetStream(t)
	in, err := ingest.Open(ctx, js, ingest.Config{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	// g-1 failed, then its redelivery answered 200: nothing to do.
	f.srv.AddHookDelivery(ghtest.HookDelivery{GUID: "g-1", Event: "workflow_run", Action: "completed", StatusCode: 502, DeliveredAt: now.Add(-2 * time.Hour)})
	f.srv.AddHookDelivery(ghtest.HookDelivery{GUID: "g-1", Event: "workflow_run", Action: "completed", StatusCode: 202, Redelivery: true, DeliveredAt: now.Add(-time.Hour)})
	// g-2 never got through.
	g2 := f.srv.AddHookDelivery(ghtest.HookDelivery{GUID: "g-2", Event: "pull_request", Action: "closed", StatusCode: 503, DeliveredAt: now.Add(-30 * time.Minute)})
	// g-3 is an event redfix does not act on; g-4 is older than the lookback.
	f.srv.AddHookDelivery(ghtest.HookDelivery{GUID: "g-3", Event: "push", StatusCode: 500, DeliveredAt: now.Add(-time.Minute)})
	f.srv.AddHookDelivery(ghtest.HookDelivery{GUID: "g-4", Event: "workflow_run", Action: "completed", StatusCode: 500, DeliveredAt: now.Add(-50 * time.Hour)})

	rs := &Resync{Forge: f.proc.Forge, Intake: in, Asked: f.store, Log: zaptest.NewLogger(t)}
	p, err := rs.Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Runs != 1 || p.Redelivered != 1 {
		t.Errorf("first pass: %+v, want 1 failed run on main and 1 redelivery", p)
	}
	if got := f.srv.Redelivered(); len(got) != 1 || got[0] != g2.ID {
		t.Errorf("redelivered %v, want [%d]", got, g2.ID)
	}
	p, err = rs.Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Runs != 0 || p.Seen != 1 || p.Redelivered != 0 {
		t.Errorf("second pass: %+v, want the run seen before and no new redelivery", p)
	}

	// The webhook's delivery of the run is triaged; the resync's copy of it
	// is not, whichever comes first.
	if res, err := f.proc.Process(ctx, ingest.Submission{ID: "d-1", Kind: event.Kind, Event: event.WorkflowRun, Payload: f.runPayload(t, ex, f.failed.ID)}); err != nil || res.Report == nil {
		t.Fatalf("webhook delivery: %+v, %v", res, err)
	}
	stream, err := js.Stream(ctx, "REDFIX_REPORTS")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := ingest.Decode(msg.Data, msg.Header)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := f.proc.Process(ctx, stored); err != nil || res.Report != nil {
		t.Errorf("the resync's delivery of a run already triaged: %+v, %v", res, err)
	}
}
