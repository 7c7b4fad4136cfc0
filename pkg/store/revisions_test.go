package store

import (
	"context"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

func TestRevisionsAndRetries(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := New(rdb, testPrefix(t, rdb))
			for i := 1; i <= 3; i++ {
				n, ok, err := s.ClaimRevision(ctx, "Acme/Shop", 7, 2)
				if err != nil {
					t.Fatal(err)
				}
				if want := min(i, 2); n != want || ok != (i <= 2) {
					t.Errorf("claim %d: n %d ok %v, want %d %v", i, n, ok, want, i <= 2)
				}
			}
			if n, err := s.Revisions(ctx, "acme/shop", 7); err != nil || n != 2 {
				t.Errorf("revisions %d %v, want 2", n, err)
			}
			if n, err := s.Revisions(ctx, "acme/shop", 8); err != nil || n != 0 {
				t.Errorf("revisions of a pull request never revised %d %v", n, err)
			}
			if all, err := s.RevisionCounts(ctx); err != nil || len(all) != 1 || all["acme/shop#7"] != 2 {
				t.Errorf("revision counts %v %v", all, err)
			}
			for want := 1; want <= 2; want++ {
				if n, err := s.NextRetry(ctx, "fp"); err != nil || n != want {
					t.Errorf("retry %d %v, want %d", n, err, want)
				}
			}

			if err := s.MarkPublished(ctx, "fp", "https://x/pull/1"); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.ForgetPublished(ctx, "fp", "https://x/pull/2"); err != nil || ok {
				t.Errorf("another pull request's record was dropped: %v %v", ok, err)
			}
			if ok, err := s.ForgetPublished(ctx, "fp", "https://x/pull/1"); err != nil || !ok {
				t.Errorf("forget: %v %v", ok, err)
			}
			if _, ok, _ := s.Published(ctx, "fp"); ok {
				t.Error("the group is still published")
			}

			for _, v := range []string{"explain", "close"} {
				if err := s.RecordCommand(ctx, task.Command{Repo: "acme/shop", Number: 7, Verb: v, User: "ana", Result: "done", At: time.Now()}); err != nil {
					t.Fatal(err)
				}
			}
			if cs, err := s.Commands(ctx, "ACME/shop", 10); err != nil || len(cs) != 2 || cs[0].Verb != "close" {
				t.Errorf("commands %+v %v", cs, err)
			}
		})
	}
}

// A pull request's first revision moves it among the revised ones in the
// land rates; later revisions do not count it again.
func TestFirstRevisionCountsThePullRequestRevised(t *testing.T) {
	for name, rdb := range outcomeBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := New(rdb, testPrefix(t, rdb))
			if _, err := s.RecordPublished(ctx, task.Fix{Repo: "acme/shop", Number: 3, URL: "https://github.com/acme/shop/pull/3", PublishedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				if _, ok, err := s.ClaimRevision(ctx, "acme/shop", 3, 3); err != nil || !ok {
					t.Fatalf("claim: %v %v", ok, err)
				}
			}
			land, err := s.LandRate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, k := range land.Kinds {
				got[k.Kind] = k.Published
			}
			if got[task.KindFix] != 1 || got[task.KindRevised] != 1 {
				t.Errorf("published by kind %v, want one fix that is also one revised", got)
			}
		})
	}
}
