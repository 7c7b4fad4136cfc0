package deliveries_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge/gitlab/deliveries"
	"github.com/redfix/redfix/pkg/forge/gitlab/event"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
	"github.com/redfix/redfix/pkg/ingest"
)

// intake keeps the submissions, once per id.
type intake struct {
	mu   sync.Mutex
	subs map[string]ingest.Submission
}

func (i *intake) Submit(_ context.Context, s ingest.Submission) (bool, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if _, ok := i.subs[s.ID]; ok {
		return true, nil
	}
	i.subs[s.ID] = s
	return false, nil
}

// TestResyncStoresMissedPipelines: a pass stores the recent failed
// pipelines on the watched branch of the projects named, as deliveries the
// processor turns into reports; a second pass stores none again; patterns
// and pipelines the filter skips are left alone.
func TestResyncStoresMissedPipelines(t *testing.T) {
	w := newWorld(t)
	w.srv.AddPipeline(project, "main", w.shas[1], "push", w.dana, &gltest.Job{Name: "unit", Status: "success"})
	red := w.srv.AddPipeline(project, "main", w.shas[0], "push", w.dana, &gltest.Job{Name: "unit", Status: "failed",
		JUnit: []byte(`<testsuite name="go"><testcase classname="example.com/ledger" name="TestBalance"><failure>boom</failure></testcase></testsuite>`)})
	w.srv.AddPipeline(project, "feature", w.shas[0], "push", w.dana, &gltest.Job{Name: "unit", Status: "failed"})
	in := &intake{subs: map[string]ingest.Submission{}}
	r := &deliveries.Resync{Forge: w.d, Projects: []string{project, "acme/**"}, Intake: in, Log: zap.NewNop()}
	p, err := r.Once(context.Background())
	if err != nil || p.Pipelines != 1 || len(in.subs) != 1 {
		t.Fatalf("first pass: %+v, %v, stored %d", p, err, len(in.subs))
	}
	if p, err := r.Once(context.Background()); err != nil || p.Pipelines != 0 || p.Seen != 1 {
		t.Errorf("second pass: %+v, %v", p, err)
	}
	var sub ingest.Submission
	for _, s := range in.subs {
		sub = s
	}
	if sub.Kind != event.Kind || sub.Event != event.Pipeline {
		t.Fatalf("stored %+v", sub)
	}
	res, err := w.p.Process(context.Background(), sub)
	if err != nil || res.Report == nil || res.Report.Commit != red.SHA || res.Report.Good != w.shas[1] {
		t.Errorf("the resync's delivery processed: %+v, %v", res, err)
	}
	r.Now = func() time.Time { return time.Now().Add(72 * time.Hour) }
	in.subs = map[string]ingest.Submission{}
	if p, err := r.Once(context.Background()); err != nil || p.Pipelines+p.Seen != 0 {
		t.Errorf("a pass looking back past the pipelines: %+v, %v", p, err)
	}
}
