package store

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/task"
)

// outcomeBackends are the in-process server and, when one is named, the
// real redis-server (TestStoreRedis fails under CI when none is).
func outcomeBackends(t *testing.T) map[string]*redis.Client {
	b := map[string]*redis.Client{"miniredis": embeddedtest.Redis(t)}
	if addr := os.Getenv("REDFIX_TEST_REDIS_ADDR"); addr != "" {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { rdb.Close() })
		b["redis"] = rdb
	}
	return b
}

func TestFixOutcomes(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := New(rdb, testPrefix(t, rdb))
			t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
			publish := func(repo string, n int) {
				t.Helper()
				ok, err := s.RecordPublished(ctx, task.Fix{Repo: repo, Number: n, URL: "https://github.com/" + repo + "/pull/1", PublishedAt: t0})
				if err != nil || !ok {
					t.Fatalf("publish %s#%d: %v, %v", repo, n, ok, err)
				}
			}
			publish("o/a", 1)
			publish("o/a", 2)
			publish("o/a", 3)
			publish("o/b", 1)
			// Recorded twice (a redelivered job): counted once.
			if ok, err := s.RecordPublished(ctx, task.Fix{Repo: "O/A", Number: 1, PublishedAt: t0}); err != nil || ok {
				t.Fatalf("second record of o/a#1: %v, %v", ok, err)
			}

			// o/a#1: commented after 1 h, changes requested after 2 h, landed
			// with edits after 5 h.
			if _, err := s.RecordReview(ctx, "o/a", 1, "commented", t0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			f, err := s.RecordReview(ctx, "o/a", 1, "changes_requested", t0.Add(2*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if !f.Reviewed || !f.ChangesRequested || !f.FirstReviewAt.Equal(t0.Add(time.Hour)) {
				t.Errorf("after two reviews: %+v", f)
			}
			if f, err = s.RecordClosed(ctx, "o/a", 1, true, true, t0.Add(5*time.Hour)); err != nil || f.State != task.FixLandedWithEdits {
				t.Fatalf("close o/a#1: %+v, %v", f, err)
			}
			// A redelivered close changes nothing.
			if f, err = s.RecordClosed(ctx, "o/a", 1, false, false, t0.Add(6*time.Hour)); err != nil || f.State != task.FixLandedWithEdits {
				t.Fatalf("close o/a#1 again: %+v, %v", f, err)
			}
			// o/a#2: approved after 3 h, landed after 3 h.
			if _, err := s.RecordReview(ctx, "o/a", 2, "approved", t0.Add(3*time.Hour)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.RecordClosed(ctx, "o/a", 2, true, false, t0.Add(3*time.Hour)); err != nil {
				t.Fatal(err)
			}
			// o/b#1: closed, reopened, closed unmerged.
			for _, step := range []func() (task.Fix, error){
				func() (task.Fix, error) { return s.RecordClosed(ctx, "o/b", 1, false, false, t0.Add(time.Hour)) },
				func() (task.Fix, error) { return s.RecordReopened(ctx, "o/b", 1) },
				func() (task.Fix, error) { return s.RecordClosed(ctx, "o/b", 1, false, false, t0.Add(2*time.Hour)) },
			} {
				if _, err := step(); err != nil {
					t.Fatal(err)
				}
			}
			// Not redfix's pull request.
			if _, err := s.RecordClosed(ctx, "o/c", 9, true, false, t0); !errors.Is(err, task.ErrNoFix) {
				t.Errorf("closing an unknown pull request: %v, want ErrNoFix", err)
			}

			land, err := s.LandRate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			o := land.Overall
			if o.Published != 4 || o.Landed != 2 || o.LandedWithEdits != 1 || o.ClosedUnmerged != 1 || o.Open != 1 ||
				o.Reviewed != 2 || o.ChangesRequested != 1 || !rateIs(o.LandRate, 2.0/3) {
				t.Errorf("overall: %+v", o)
			}
			if o.MeanSecondsToFirstReview != 2*3600 || o.MeanSecondsToLand != 4*3600 {
				t.Errorf("overall times: first review %v s, land %v s; want 7200, 14400", o.MeanSecondsToFirstReview, o.MeanSecondsToLand)
			}
			if len(land.Repos) != 2 || land.Repos[0].Repo != "o/a" || land.Repos[1].Repo != "o/b" {
				t.Fatalf("repos: %+v", land.Repos)
			}
			// Land rates are of the decided pull requests: o/a's open one
			// does not count against it.
			if a, b := land.Repos[0], land.Repos[1]; a.Published != 3 || !rateIs(a.LandRate, 1) || b.Published != 1 || !rateIs(b.LandRate, 0) || b.ClosedUnmerged != 1 {
				t.Errorf("per repository: %+v %+v", a, b)
			}

			// A repository whose pull requests are all open has no land
			// rate yet (null), not 0.
			if _, err := s.RecordPublished(ctx, task.Fix{Repo: "o/d", Number: 1, PublishedAt: t0}); err != nil {
				t.Fatal(err)
			}
			land, err = s.LandRate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range land.Repos {
				if r.Repo == "o/d" && (r.Published != 1 || r.LandRate != nil) {
					t.Errorf("o/d, nothing decided: %+v, want no land rate", r)
				}
			}
			if b, err := json.Marshal(land.Repos[len(land.Repos)-1]); err != nil || !strings.Contains(string(b), `"land_rate":null`) {
				t.Errorf("o/d as JSON: %s %v, want land_rate null", b, err)
			}
		})
	}
}

// rateIs reports whether a rate is set and equal to want.
func rateIs(r *float64, want float64) bool { return r != nil && math.Abs(*r-want) < 1e-12 }

func TestConcurrentFixOutcomes(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := New(rdb, testPrefix(t, rdb))
			if _, err := s.RecordPublished(ctx, task.Fix{Repo: "o/a", Number: 7}); err != nil {
				t.Fatal(err)
			}
			// Redelivered reviews and closes racing: each counts once.
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var err error
					if i%2 == 0 {
						_, err = s.RecordReview(ctx, "o/a", 7, "approved", time.Now())
					} else {
						_, err = s.RecordClosed(ctx, "o/a", 7, true, false, time.Now())
					}
					if err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			land, err := s.LandRate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if o := land.Overall; o.Published != 1 || o.Landed != 1 || o.Reviewed != 1 || !rateIs(o.LandRate, 1) {
				t.Errorf("after racing updates: %+v", o)
			}
		})
	}
}

func TestClaimRun(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := New(rdb, testPrefix(t, rdb))
			ok, holder, err := s.ClaimRun(ctx, "o/a/1/1", "delivery-1", time.Hour)
			if err != nil || !ok || holder != "delivery-1" {
				t.Fatalf("first claim: %v %q %v", ok, holder, err)
			}
			if ok, _, _ := s.ClaimRun(ctx, "o/a/1/1", "delivery-1", time.Hour); !ok {
				t.Error("the holder's own redelivery was refused")
			}
			if ok, holder, _ := s.ClaimRun(ctx, "o/a/1/1", "resync", time.Hour); ok || holder != "delivery-1" {
				t.Errorf("second delivery of the same run: %v %q", ok, holder)
			}
			if err := s.ReleaseRun(ctx, "o/a/1/1", "resync"); err != nil {
				t.Fatal(err)
			}
			if ok, _, _ := s.ClaimRun(ctx, "o/a/1/1", "resync", time.Hour); ok {
				t.Error("a release by a non-holder freed the run")
			}
			if err := s.ReleaseRun(ctx, "o/a/1/1", "delivery-1"); err != nil {
				t.Fatal(err)
			}
			if ok, _, _ := s.ClaimRun(ctx, "o/a/1/1", "resync", time.Hour); !ok {
				t.Error("a released run could not be claimed")
			}
			first, err := s.FirstRedelivery(ctx, "42", time.Hour)
			if err != nil || !first {
				t.Fatalf("first redelivery: %v %v", first, err)
			}
			if again, _ := s.FirstRedelivery(ctx, "42", time.Hour); again {
				t.Error("a second redelivery request was allowed")
			}
		})
	}
}

// TestClosedByBot: a pull request redfix closed itself counts as closed
// unmerged and as closed by the bot, once, whether the closing's webhook
// recorded it closed first or not; reopened, it counts as neither.
func TestClosedByBot(t *testing.T) {
	ctx := context.Background()
	s := New(embeddedtest.Redis(t), "test")
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for _, n := range []int{1, 2} {
		if _, err := s.RecordPublished(ctx, task.Fix{Repo: "o/a", Number: n, PublishedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	// #1: the bot records first, then the webhook; #2: the other way round.
	if f, err := s.RecordClosedByBot(ctx, "o/a", 1, task.CloseFixed, t0.Add(time.Hour)); err != nil || f.State != task.FixClosed || f.ClosedByBot != task.CloseFixed {
		t.Fatalf("closed by the bot: %+v %v", f, err)
	}
	if _, err := s.RecordClosed(ctx, "o/a", 1, false, false, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordClosed(ctx, "o/a", 2, false, false, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for range 2 { // twice: counted once
		if f, err := s.RecordClosedByBot(ctx, "o/a", 2, task.CloseConflict, t0.Add(time.Hour)); err != nil || f.ClosedByBot != task.CloseConflict {
			t.Fatalf("closed by the bot after the webhook: %+v %v", f, err)
		}
	}
	land, err := s.LandRate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if o := land.Overall; o.ClosedUnmerged != 2 || o.ClosedByBot != 2 || o.Open != 0 || land.Kinds[0].ClosedByBot != 2 {
		t.Errorf("stats %+v, kinds %+v", o, land.Kinds)
	}
	if f, err := s.RecordReopened(ctx, "o/a", 2); err != nil || f.ClosedByBot != "" {
		t.Fatalf("reopened: %+v %v", f, err)
	}
	land, _ = s.LandRate(ctx)
	if o := land.Overall; o.ClosedUnmerged != 1 || o.ClosedByBot != 1 || o.Open != 1 {
		t.Errorf("after the reopening: %+v", o)
	}
}
