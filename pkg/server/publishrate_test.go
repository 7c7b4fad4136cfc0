package server

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

// The publish rate says "—" (null in the API) until a task has settled,
// as the land rate does, never "0.0%"; and a task whose pull request could
// not be published is a failed one, in the rate.
func TestPublishRateBeforeAnythingSettledAndWithAFailedPublish(t *testing.T) {
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "publish-rate")
	srv := httptest.NewServer(New(&recordingIntake{}, st, prometheus.NewRegistry(), Options{ReadOpen: true}, zaptest.NewLogger(t)).Handler())
	defer srv.Close()

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.SaveTask(ctx, task.Task{ID: "t-queued", Fingerprint: "fp0", Status: task.StatusQueued}))
	_, page := get(t, srv.URL+"/")
	if !strings.Contains(page, `id="publish-rate">—</b><span class="muted">no task settled yet`) {
		t.Errorf("publish rate with nothing settled:\n%s", between(page, `id="publish-rate"`, "</div>"))
	}
	if _, body := get(t, srv.URL+"/api/v1/stats"); !strings.Contains(body, `"publish_rate": null`) {
		t.Errorf("stats with nothing settled: %s", body)
	}

	must(st.SaveTask(ctx, task.Task{ID: "t-pub", Fingerprint: "fp1", Status: task.StatusPublished, PullRequest: "https://github.com/acme/shop/pull/1"}))
	must(st.SaveTask(ctx, task.Task{ID: "t-fail", Fingerprint: "fp2", Status: task.StatusFailed,
		Reason: "publish task t-fail: repository https://git.example/acme/shop.git is a URL; the local publisher needs a path: not a local git repository"}))
	_, page = get(t, srv.URL+"/")
	if !strings.Contains(page, `id="publish-rate">50.0%`) {
		t.Errorf("publish rate with one published and one that failed to publish:\n%s", between(page, `id="publish-rate"`, "</div>"))
	}
	if _, body := get(t, srv.URL+"/api/v1/stats"); !strings.Contains(body, `"publish_rate": 0.5`) {
		t.Errorf("stats: %s", body)
	}
}

// between is s from the first from to the next to after it.
func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], to)
	if j < 0 {
		return s[i:]
	}
	return s[i : i+j]
}
