package revert

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	p := NewPolicy(true, 24*time.Hour, 0.9, []string{"schema/**", "*.sql"})
	sure := task.Task{Bisection: task.Bisection{Blame: "c0ffee", Confidence: 0.95}}
	unsure := task.Task{Bisection: task.Bisection{Blame: "c0ffee", Confidence: 0.6}}
	fresh := Culprit{SHA: "c0ffee", Parents: 1, Committed: now.Add(-time.Hour), Files: []string{"pricing/pricing.go"}}
	old := fresh
	old.Committed = now.Add(-25 * time.Hour)
	merge := fresh
	merge.Parents = 2
	schema := fresh
	schema.Files = []string{"README.md", "schema/orders.json"}
	off := p
	off.Enabled = false
	for _, c := range []struct {
		name  string
		p     Policy
		t     task.Task
		c     Culprit
		cause Cause
		ok    bool
		why   string
	}{
		{"sure and fresh, no patch", p, sure, fresh, NoPatch, true, ""},
		{"turned off", off, sure, fresh, NoPatch, false, "turned off"},
		{"no culprit", p, task.Task{}, fresh, NoPatch, false, "blamed no commit"},
		{"not sure enough", p, unsure, fresh, NoPatch, false, "confidence"},
		{"too old", p, sure, old, NoPatch, false, "more than 24h"},
		{"a merge commit", p, sure, merge, NoPatch, false, "merge commit"},
		{"a merge commit, even asked", p, unsure, merge, Asked, false, "merge commit"},
		{"asked: confidence and age are the person's call", p, unsure, old, Asked, true, ""},
		{"first paths matched", p, sure, schema, FirstPaths, true, ""},
		{"first paths not matched", p, sure, fresh, FirstPaths, false, "no path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, why := c.p.Decide(c.t, c.c, now, c.cause)
			if ok != c.ok || !strings.Contains(why, c.why) {
				t.Errorf("Decide = %v %q, want %v %q", ok, why, c.ok, c.why)
			}
		})
	}
}

// recorder is a publisher that keeps what it was asked to publish.
type recorder struct {
	mu   sync.Mutex
	got  []publish.Revert
	urls int
}

func (r *recorder) PublishRevert(_ context.Context, rv publish.Revert) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rv)
	r.urls++
	return "https://github.example/acme/calc/pull/" + string(rune('0'+r.urls)), nil
}

// changes reads the recorder's pull requests' addresses, as their forge's
// driver would: OWNER/NAME/pull/N on github.example.
type changes struct{}

func (changes) FixOf(url string) (task.Fix, bool) {
	rest, ok := strings.CutPrefix(url, "https://github.example/")
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 4 || parts[2] != "pull" {
		return task.Fix{}, false
	}
	n, err := strconv.Atoi(parts[3])
	return task.Fix{Repo: parts[0] + "/" + parts[1], Number: n, URL: url}, err == nil
}

// calcRepo is a tiny Go module whose culprit breaks TestAdd, followed by
// one later commit that changes later (a path) with text.
func calcRepo(t *testing.T, ctx context.Context, later, text string) (dir, culprit string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "calc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(msg string) string {
		t.Helper()
		sha, err := repo.CommitAll(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	write("go.mod", "module example.com/calc\n\ngo 1.21\n")
	write("calc.go", "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n")
	write("calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(Add(2, 2))\n\t}\n}\n")
	commit("calc: add")
	write("calc.go", "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a - b }\n")
	culprit = commit("calc: a faster add")
	write(later, text)
	commit("later work")
	return dir, culprit
}

func reverter(t *testing.T, pub Publisher) (*Reverter, *store.Store) {
	st := store.New(embeddedtest.Redis(t), "test")
	return &Reverter{
		Policy:    NewPolicy(true, 24*time.Hour, 0.9, nil),
		Ledger:    st,
		Fixes:     st,
		Changes:   changes{},
		Publisher: pub,
		Checkouts: &workspace.Mirrors{Dir: filepath.Join(t.TempDir(), "mirrors")},
		Languages: lang.New(golang.Driver{Tests: golang.Runner{Timeout: 5 * time.Minute}}),
		WorkDir:   t.TempDir(),
		Log:       zaptest.NewLogger(t),
	}, st
}

func calcTask(dir, culprit string) task.Task {
	return task.Task{ID: "t1", Fingerprint: "fp1", Repo: dir, Commit: culprit,
		Failures:  []task.Failure{{Package: "example.com/calc", Test: "TestAdd"}},
		Bisection: task.Bisection{Blame: culprit, Confidence: 0.99}}
}

// TestRevertRefusedWhenLaterCommitsBuildOnIt: the same culprit is
// reverted when the later commit changes another file, and refused when
// the later commit changes the culprit's file; the revert is made once.
func TestRevertRefusedWhenLaterCommitsBuildOnIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	dir, culprit := calcRepo(t, ctx, "calc.go", "package calc\n\n// Add adds, fast.\nfunc Add(a, b int) int { return a - b }\n\nfunc Double(a int) int { return Add(a, a) }\n")
	pub := &recorder{}
	r, _ := reverter(t, pub)
	_, err := r.Revert(ctx, calcTask(dir, culprit), NoPatch, nil)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "later commits build on") {
		t.Fatalf("revert under a later commit on its file: %v, want refused", err)
	}
	if len(pub.got) != 0 {
		t.Fatalf("published %d reverts", len(pub.got))
	}

	dir, culprit = calcRepo(t, ctx, "docs/README.md", "calc adds.\n")
	pub = &recorder{}
	r, st := reverter(t, pub)
	url, err := r.Revert(ctx, calcTask(dir, culprit), NoPatch, nil)
	if err != nil || len(pub.got) != 1 {
		t.Fatalf("revert under a later commit elsewhere: %q %v (%d published)", url, err, len(pub.got))
	}
	rv := pub.got[0]
	if !strings.HasPrefix(rv.Subject, `Revert "calc: a faster add"`) || !strings.Contains(rv.Tests, "pass at the revert") || rv.Base != "main" {
		t.Errorf("revert: %+v", rv)
	}
	if out, err := (gitrepo.Repo{Dir: dir}).Git(ctx, "rev-parse", "HEAD"); err != nil || strings.TrimSpace(out) != rv.Head {
		t.Errorf("reverted on %s, want the head %s", rv.Head, out)
	}
	// Once per culprit; and the group now has its pull request.
	if again, err := r.Revert(ctx, calcTask(dir, culprit), Asked, nil); err != nil || again != url || len(pub.got) != 1 {
		t.Errorf("second revert: %q %v (%d published), want %s", again, err, len(pub.got), url)
	}
	if got, ok, err := st.Published(ctx, "fp1"); err != nil || !ok || got != url {
		t.Errorf("the group's publication: %q %v %v", got, ok, err)
	}
	f, err := st.GetFix(ctx, "acme/calc", 1)
	if err != nil || f.Kind != task.KindRevert {
		t.Errorf("the revert's record: %+v %v", f, err)
	}
}

// TestRevertHeldWhileTheGroupHasAFix: a group whose fix is open gets no
// revert.
func TestRevertHeldWhileTheGroupHasAFix(t *testing.T) {
	ctx := context.Background()
	pub := &recorder{}
	r, st := reverter(t, pub)
	if err := st.MarkPublished(ctx, "fp1", "https://github.example/acme/calc/pull/7"); err != nil {
		t.Fatal(err)
	}
	_, err := r.Revert(ctx, calcTask("/nonexistent", "c0ffee"), NoPatch, nil)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "pull/7") || len(pub.got) != 0 {
		t.Fatalf("revert of a group with a fix: %v", err)
	}
	// The culprit's claim was given back: a later revert may try.
	if ok, _, err := st.ClaimRevert(ctx, "c0ffee", "other", time.Minute); err != nil || !ok {
		t.Errorf("the culprit's claim was kept: %v %v", ok, err)
	}
}
