package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/series"
	"github.com/redfix/redfix/pkg/task"
)

func TestDailySeries(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			prefix := testPrefix(t, rdb)
			s := New(rdb, prefix)
			d1 := time.Date(2026, 11, 1, 23, 30, 0, 0, time.UTC)
			d3 := d1.Add(48 * time.Hour)
			if err := s.Count(ctx, d1, series.Count{Event: series.EventPublished, Repo: "https://github.com/Acme/Shop"}, series.Count{Event: series.EventDropped, Class: "flaky", Repo: "/srv/repo"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Count(ctx, d1.Add(10*time.Minute), series.Count{Event: series.EventPublished, Repo: "https://github.com/acme/shop.git", N: 2}); err != nil {
				t.Fatal(err)
			}
			if err := s.Count(ctx, d3, series.Count{Event: series.EventGateRejected, Class: "oracle", Repo: "a|b"}); err != nil {
				t.Fatal(err)
			}
			days, err := s.Daily(ctx, d1.Add(-24*time.Hour), d3)
			if err != nil {
				t.Fatal(err)
			}
			if len(days) != 4 || days[0].Day != "2026-10-31" || days[3].Day != "2026-11-03" {
				t.Fatalf("days: %+v", days)
			}
			if len(days[0].Counts) != 0 || len(days[2].Counts) != 0 {
				t.Errorf("quiet days have counts: %+v", days)
			}
			// 23:40 UTC on the 1st is still the 1st; both spellings of the
			// repository meet under owner/name.
			want := []series.Count{{Event: series.EventDropped, Class: "flaky", Repo: "/srv/repo", N: 1}, {Event: series.EventPublished, Repo: "acme/shop", N: 3}}
			if got := days[1].Counts; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
				t.Errorf("2026-11-01: %+v, want %+v", got, want)
			}
			if got := days[3].Counts; len(got) != 1 || got[0] != (series.Count{Event: series.EventGateRejected, Class: "oracle", Repo: "a|b", N: 1}) {
				t.Errorf("2026-11-03: %+v", got)
			}
			ttl, err := rdb.TTL(ctx, prefix+":daily:2026-11-01").Result()
			if err != nil || ttl <= 300*24*time.Hour {
				t.Errorf("daily counters' TTL %s, %v: want about %s", ttl, err, SeriesTTL)
			}
		})
	}
}

func TestFixOutcomesCountedByDay(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := New(rdb, testPrefix(t, rdb))
			t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
			for n := 1; n <= 2; n++ {
				if _, err := s.RecordPublished(ctx, task.Fix{Repo: "Acme/Shop", Number: n, PublishedAt: t0}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.RecordReview(ctx, "acme/shop", 1, "approved", t0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.RecordClosed(ctx, "acme/shop", 1, true, false, t0.Add(25*time.Hour)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.RecordClosed(ctx, "acme/shop", 2, false, false, t0.Add(26*time.Hour)); err != nil {
				t.Fatal(err)
			}
			// Closing again changes nothing.
			if _, err := s.RecordClosed(ctx, "acme/shop", 1, true, false, t0.Add(27*time.Hour)); err != nil {
				t.Fatal(err)
			}
			days, err := s.Daily(ctx, t0, t0.Add(24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			got := func(i int) string {
				var parts []string
				for _, c := range days[i].Counts {
					parts = append(parts, c.Event+"/"+c.Repo+"="+strings.Repeat("I", int(c.N)))
				}
				return strings.Join(parts, " ")
			}
			if g := got(0); g != "reviewed/acme/shop=I" {
				t.Errorf("day 1: %s", g)
			}
			if g := got(1); g != "closed_unmerged/acme/shop=I landed/acme/shop=I" {
				t.Errorf("day 2: %s", g)
			}
		})
	}
}

func TestTimesToPRAndRecentLists(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := New(rdb, testPrefix(t, rdb))
			t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
			for i, d := range []time.Duration{time.Minute, 2 * time.Minute, time.Hour} {
				if err := s.RecordTimeToPR(ctx, t0.Add(time.Duration(i)*24*time.Hour), d); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.TimesToPR(ctx, t0.Add(24*time.Hour), t0.Add(72*time.Hour))
			if err != nil || len(got) != 2 || got[0] != 120 || got[1] != 3600 {
				t.Fatalf("samples of days 2-4: %v, %v", got, err)
			}
			for i := range maxRecent + 5 {
				if err := s.RecordPullRequest(ctx, series.PullRequest{TaskID: "t" + string(rune('a'+i%26)), URL: "u", At: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
					t.Fatal(err)
				}
			}
			prs, err := s.RecentPullRequests(ctx, 3)
			if err != nil || len(prs) != 3 || !prs[0].At.Equal(t0.Add(time.Duration(maxRecent+4)*time.Minute)) {
				t.Fatalf("recent pull requests: %+v, %v", prs, err)
			}
			if all, err := s.RecentPullRequests(ctx, 0); err != nil || len(all) != maxRecent {
				t.Fatalf("kept %d, %v; want the last %d", len(all), err, maxRecent)
			}
			if err := s.RecordTriageFailure(ctx, series.TriageFailure{Submission: "s1", Class: "invalid", Reason: "no repository"}); err != nil {
				t.Fatal(err)
			}
			fs, err := s.RecentTriageFailures(ctx, 10)
			if err != nil || len(fs) != 1 || fs[0].Reason != "no repository" {
				t.Fatalf("triage failures: %+v, %v", fs, err)
			}
		})
	}
}
