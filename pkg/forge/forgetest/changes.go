package forgetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
)

// open pushes a branch changing file and opens a change request from it.
func (f *fixture) open(t *testing.T, cr ChangeRequests, branch, file string) (forge.ChangeRequest, string) {
	t.Helper()
	sha := f.branch(t, branch, file, "t")
	f.push(t, sha, branch)
	opened, err := cr.OpenChangeRequest(context.Background(), f.repo, forge.NewChangeRequest{
		Title: "fix: " + branch, Body: "Body of " + branch + ".", Head: branch, Base: "main", Draft: true,
	})
	if err != nil {
		t.Fatalf("open a change request from %s: %v", branch, err)
	}
	return opened, sha
}

// testChangeRequests: a change request opened from a pushed branch is
// found by its branch, read by its number and address, listed, labelled
// and closed; a second one from the same branch is refused.
func testChangeRequests(t *testing.T, b Backend) {
	ctx := context.Background()
	f := newFixture(t, b, "changes")
	cr := need[ChangeRequests](t, f.d)
	info, err := cr.Repository(ctx, f.repo)
	if err != nil {
		t.Fatal(err)
	}
	if info.DefaultBranch != "main" || info.WebURL == "" || !info.ID.Same(f.repo) {
		t.Errorf("repository %+v: want main, a page, and %s", info, f.repo)
	}
	testLinks(t, f, info)
	if none, err := cr.FindChangeRequest(ctx, f.repo, "redfix/fix-add", true); err != nil || none != nil {
		t.Fatalf("a change request before any: %+v, %v", none, err)
	}
	opened, sha := f.open(t, cr, "redfix/fix-add", "calc/calc.go")
	if opened.Number <= 0 || opened.URL == "" || opened.State != forge.StateOpen || opened.Head != "redfix/fix-add" || opened.Base != "main" || !opened.Repo.Same(f.repo) {
		t.Errorf("opened %+v", opened)
	}
	for _, fs := range []*forge.Forges{nil, forge.New(f.d)} {
		d, repo, n, ok := fs.ChangeOf(opened.URL)
		if fs == nil && ok {
			t.Errorf("no driver read %s as a change request", opened.URL)
		}
		if fs != nil && (!ok || d != f.d || n != opened.Number || !repo.Same(f.repo)) {
			t.Errorf("%s read as change request %d of %s (%v)", opened.URL, n, repo, ok)
		}
	}
	if _, err := cr.OpenChangeRequest(ctx, f.repo, forge.NewChangeRequest{Title: "again", Head: "redfix/fix-add", Base: "main"}); !errors.Is(err, forge.ErrExists) {
		t.Errorf("a second change request from the branch: %v; want forge.ErrExists", err)
	}
	found, err := cr.FindChangeRequest(ctx, f.repo, "redfix/fix-add", true)
	if err != nil || found == nil || found.Number != opened.Number {
		t.Fatalf("found %+v, %v; want number %d", found, err, opened.Number)
	}
	read, err := cr.ChangeRequest(ctx, f.repo, opened.Number)
	if err != nil || read.HeadSHA != sha || read.State != forge.StateOpen || read.Title != "fix: redfix/fix-add" || read.Body != "Body of redfix/fix-add." || read.Base != "main" {
		t.Errorf("read %+v, %v; want head %s, open", read, err, sha)
	}
	if files, err := cr.ChangedFiles(ctx, f.repo, opened.Number); err != nil || !slices.Contains(files, "calc/calc.go") {
		t.Errorf("changed files %v, %v", files, err)
	}
	testListing(t, f, cr, opened)
	if err := cr.AddLabel(ctx, f.repo, opened.Number, "redfix"); err != nil {
		t.Fatal(err)
	}
	if got := b.Labels(t, f.repo, opened.Number); !slices.Contains(got, "redfix") {
		t.Errorf("labels %v", got)
	}
	testClose(t, f, cr, opened)
}

// testLinks: the pages of a commit, a commit's files and a file's line
// are under the repository's page.
func testLinks(t *testing.T, f *fixture, info forge.Repository) {
	l, ok := f.d.(Links)
	if !ok {
		return
	}
	for _, u := range []string{l.CommitURL(info, f.main), l.TreeURL(info, f.main), l.FileURL(info, f.main, "calc/calc.go", 3)} {
		if !strings.HasPrefix(u, info.WebURL+"/") || !strings.Contains(u, f.main) {
			t.Errorf("link %q is not a page of %s at %s", u, info.WebURL, f.main)
		}
	}
	if u := l.FileURL(info, f.main, "calc/calc.go", 3); !strings.Contains(u, "calc/calc.go") {
		t.Errorf("file link %q does not name the file", u)
	}
}

// testListing: open change requests listed by their head's prefix, and
// bounded.
func testListing(t *testing.T, f *fixture, cr ChangeRequests, ours forge.ChangeRequest) {
	ctx := context.Background()
	theirs, _ := f.open(t, cr, "alice/other", "README.md")
	numbers := func(l forge.Listing) []int {
		t.Helper()
		got, err := cr.OpenChangeRequests(ctx, f.repo, l)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, c := range got {
			out = append(out, c.Number)
		}
		slices.Sort(out)
		return out
	}
	if got := numbers(forge.Listing{HeadPrefix: "redfix/"}); !slices.Equal(got, []int{ours.Number}) {
		t.Errorf("redfix's open change requests: %v; want [%d]", got, ours.Number)
	}
	if got := numbers(forge.Listing{RecentlyUpdated: true}); !slices.Equal(got, []int{ours.Number, theirs.Number}) {
		t.Errorf("all open change requests: %v; want [%d %d]", got, ours.Number, theirs.Number)
	}
	if got := numbers(forge.Listing{Limit: 1}); len(got) != 1 {
		t.Errorf("at most one: %v", got)
	}
	if got := numbers(forge.Listing{HeadPrefix: "nobody/"}); len(got) != 0 {
		t.Errorf("none from nobody/: %v", got)
	}
}

// testClose: a closed change request is no longer open, is found in any
// state, and closing it again is no error; its branch can then be deleted.
func testClose(t *testing.T, f *fixture, cr ChangeRequests, opened forge.ChangeRequest) {
	ctx := context.Background()
	if err := cr.CloseChangeRequest(ctx, f.repo, opened.Number); err != nil {
		t.Fatal(err)
	}
	if read, err := cr.ChangeRequest(ctx, f.repo, opened.Number); err != nil || read.State != forge.StateClosed {
		t.Errorf("after closing: %+v, %v", read, err)
	}
	if open, err := cr.FindChangeRequest(ctx, f.repo, opened.Head, true); err != nil || open != nil {
		t.Errorf("an open change request after closing: %+v, %v", open, err)
	}
	if any, err := cr.FindChangeRequest(ctx, f.repo, opened.Head, false); err != nil || any == nil || any.Number != opened.Number {
		t.Errorf("the closed change request in any state: %+v, %v", any, err)
	}
	if err := cr.CloseChangeRequest(ctx, f.repo, opened.Number); err != nil {
		t.Errorf("close again: %v", err)
	}
	if err := cr.DeleteBranch(ctx, f.repo, opened.Head); err != nil {
		t.Fatal(err)
	}
	cred, err := need[Credentials](t, f.d).Credentials(ctx, f.repo)
	if err != nil {
		t.Fatal(err)
	}
	if out := git(t, f.dir, cred.Env, "ls-remote", f.url, "refs/heads/"+opened.Head); strings.TrimSpace(out) != "" {
		t.Errorf("the branch is still there: %q", out)
	}
}
