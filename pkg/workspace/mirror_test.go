package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/sandbox"
)

const testToken = "ghs_mirrortesttoken0123456789"

// remoteRepo serves a two-commit repository as owner/name on srv and
// returns the local source and its commits.
func remoteRepo(t *testing.T, srv *ghtest.Server, owner, name string) (gitrepo.Repo, []string) {
	t.Helper()
	ctx := context.Background()
	src, err := gitrepo.Init(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var commits []string
	for i, content := range []string{"one\n", "two\n"} {
		if err := os.WriteFile(filepath.Join(src.Dir, "a.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		sha, err := src.CommitAll(ctx, "commit "+content)
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		commits = append(commits, sha)
	}
	srv.CreateRepo(owner, name, src.Dir)
	return src, commits
}

func mirrors(t *testing.T, max int64) *Mirrors {
	return &Mirrors{
		Dir:      filepath.Join(t.TempDir(), "mirrors"),
		MaxBytes: max,
		Auth: func(ctx context.Context, remote string) ([]string, error) {
			return github.GitAuthEnv(testToken), nil
		},
	}
}

func TestMirrorIsReusedAndFetchedOnlyForNewCommits(t *testing.T) {
	ctx := context.Background()
	srv := ghtest.New(t)
	srv.AddToken(testToken, "redfix")
	src, commits := remoteRepo(t, srv, "acme", "widgets")
	url := srv.CloneURL("acme", "widgets")
	m := mirrors(t, 0)

	ws1, err := m.Open(ctx, url, commits[0], t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(ws1.Dir, "a.txt")); string(data) != "one\n" {
		t.Fatalf("first job's checkout: %q", data)
	}
	if st := m.Stats(); st.Clones != 1 || st.Fetches != 0 {
		t.Fatalf("after the first job: %+v", st)
	}
	before := srv.GitStatsOf("acme", "widgets")

	// A second job on the same repository, at a commit the mirror has:
	// no clone, no fetch, nothing asked of the server.
	ws2, err := m.Open(ctx, url, commits[1], t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(ws2.Dir, "a.txt")); string(data) != "two\n" {
		t.Fatalf("second job's checkout: %q", data)
	}
	if st := m.Stats(); st.Clones != 1 || st.Fetches != 0 {
		t.Fatalf("after the second job: %+v", st)
	}
	if after := srv.GitStatsOf("acme", "widgets"); after.UploadPacks != before.UploadPacks || after.Advertisements["git-upload-pack"] != before.Advertisements["git-upload-pack"] {
		t.Fatalf("the second job went to the server: %+v then %+v", before, after)
	}
	// The two work trees are independent.
	if err := ws2.WriteFile("a.txt", []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(ws1.Dir, "a.txt")); string(data) != "one\n" {
		t.Fatalf("an edit in one job's work tree reached another's: %q", data)
	}
	if diff, err := ws2.Diff(ctx); err != nil || !strings.Contains(diff, "+edited") {
		t.Fatalf("diff in a work tree: %q %v", diff, err)
	}

	// A commit pushed since: one fetch, still no clone.
	if err := os.WriteFile(filepath.Join(src.Dir, "a.txt"), []byte("three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	third, err := src.CommitAll(ctx, "three")
	if err != nil {
		t.Fatal(err)
	}
	srv.Lock()
	bare, _ := srv.Repo("acme", "widgets")
	srv.Unlock()
	if _, err := src.Git(ctx, "push", "-q", bare.Dir, "main"); err != nil {
		t.Fatal(err)
	}
	ws3, err := m.Open(ctx, url, third, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.Clones != 1 || st.Fetches != 1 {
		t.Fatalf("after a new commit: %+v", st)
	}

	// The token is in no file on disk and in no command run in the
	// workspace.
	for _, dir := range []string{ws3.Dir, m.Dir} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.Contains(p, "/objects/") {
				return nil
			}
			if data, err := os.ReadFile(p); err == nil && (strings.Contains(string(data), testToken) || strings.Contains(string(data), "extraHeader")) {
				t.Errorf("%s holds the credentials", p)
			}
			return nil
		})
	}
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: ws3.Dir, Args: []string{"sh", "-c", "env; git config --list"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Output, testToken) || strings.Contains(res.Output, github.GitAuthEnv(testToken)[2]) || strings.Contains(res.Output, "extraheader") {
		t.Errorf("a command in the workspace sees the credentials:\n%s", res.Output)
	}

	for _, ws := range []*Workspace{ws1, ws2, ws3} {
		if err := ws.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(ws.Dir); !os.IsNotExist(err) {
			t.Errorf("work tree %s left behind", ws.Dir)
		}
	}
	if out, _ := (gitrepo.Repo{Dir: filepath.Join(m.Dir, mirrorName(url))}).Git(ctx, "worktree", "list"); strings.Count(out, "\n") != 1 {
		t.Errorf("the mirror still lists work trees:\n%s", out)
	}
}

func TestMirrorWithoutCredentialsFailsClearly(t *testing.T) {
	srv := ghtest.New(t)
	srv.AddToken(testToken, "redfix")
	_, commits := remoteRepo(t, srv, "acme", "widgets")
	m := &Mirrors{Dir: t.TempDir()}
	_, err := m.Open(context.Background(), srv.CloneURL("acme", "widgets"), commits[0], t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "clone "+srv.CloneURL("acme", "widgets")) {
		t.Fatalf("err = %v", err)
	}
	if srv.GitStatsOf("acme", "widgets").Denied == 0 {
		t.Fatal("the server was not asked")
	}
}

func TestMirrorsAreEvictedLeastRecentlyUsedFirst(t *testing.T) {
	ctx := context.Background()
	srv := ghtest.New(t)
	srv.AddToken(testToken, "redfix")
	_, a := remoteRepo(t, srv, "acme", "a")
	_, b := remoteRepo(t, srv, "acme", "b")
	_, c := remoteRepo(t, srv, "acme", "c")
	m := mirrors(t, 1) // every mirror is over the bound
	dirOf := func(name string) string { return filepath.Join(m.Dir, mirrorName(srv.CloneURL("acme", name))) }
	exists := func(name string) bool { _, err := os.Stat(dirOf(name)); return err == nil }

	wsA, err := m.Open(ctx, srv.CloneURL("acme", "a"), a[1], t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A is in use: opening B does not evict it.
	wsB, err := m.Open(ctx, srv.CloneURL("acme", "b"), b[1], t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !exists("a") || !exists("b") {
		t.Fatal("a mirror in use was evicted")
	}
	wsA.Close()
	wsB.Close()
	// Neither is in use now: opening C evicts A then B (oldest first) but
	// never C.
	wsC, err := m.Open(ctx, srv.CloneURL("acme", "c"), c[1], t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer wsC.Close()
	if exists("a") || exists("b") || !exists("c") {
		t.Fatalf("after C: a %v, b %v, c %v; want only c", exists("a"), exists("b"), exists("c"))
	}
	// A again is cloned again.
	if _, err := m.Open(ctx, srv.CloneURL("acme", "a"), a[0], t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.Clones != 4 {
		t.Fatalf("clones %d, want 4 (a, b, c, a again)", st.Clones)
	}
}

func TestMirrorsOrderOfEvictionWithRoom(t *testing.T) {
	ctx := context.Background()
	srv := ghtest.New(t)
	srv.AddToken(testToken, "redfix")
	_, a := remoteRepo(t, srv, "acme", "a")
	_, b := remoteRepo(t, srv, "acme", "b")
	_, c := remoteRepo(t, srv, "acme", "c")
	m := mirrors(t, 0)
	open := func(name, commit string) {
		ws, err := m.Open(ctx, srv.CloneURL("acme", name), commit, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		ws.Close()
	}
	open("a", a[0])
	open("b", b[0])
	open("a", a[1]) // a is now more recent than b
	// Room for two mirrors: C's arrival evicts b, the least recently used.
	size := dirSize(filepath.Join(m.Dir, mirrorName(srv.CloneURL("acme", "a"))))
	m.MaxBytes = 2*size + size/2
	open("c", c[0])
	for name, want := range map[string]bool{"a": true, "b": false, "c": true} {
		_, err := os.Stat(filepath.Join(m.Dir, mirrorName(srv.CloneURL("acme", name))))
		if (err == nil) != want {
			t.Errorf("mirror %s present %v, want %v", name, err == nil, want)
		}
	}
}

func TestMirrorsOpenLocalPathsAsBefore(t *testing.T) {
	ctx := context.Background()
	src, err := gitrepo.Init(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src.Dir, "a.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sha, err := src.CommitAll(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	m := &Mirrors{Dir: filepath.Join(t.TempDir(), "mirrors")}
	for _, s := range []string{src.Dir, "file://" + src.Dir} {
		ws, err := m.Open(ctx, s, sha, t.TempDir())
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		ws.Close()
	}
	if st := m.Stats(); st.Clones != 0 {
		t.Fatalf("local paths went through the mirrors: %+v", st)
	}
	if _, err := os.Stat(m.Dir); !os.IsNotExist(err) {
		t.Fatal("a mirror directory was made for local paths")
	}
}

func TestDefaultHead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sha, err := repo.CommitAll(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	branch, commit, err := (&Mirrors{Dir: t.TempDir()}).DefaultHead(ctx, dir)
	if err != nil || branch != "main" || commit != sha {
		t.Errorf("DefaultHead = %q %q %v, want main %s", branch, commit, err, sha)
	}
	if _, _, err := DefaultHead(ctx, filepath.Join(dir, "nope"), nil); err == nil {
		t.Error("no error for a repository that does not exist")
	}
}

// A remote's default head is read with the mirror's credentials and
// fetched into the mirror: a work tree opened before it landed can check
// it out.
func TestMirrorDefaultHeadOfRemote(t *testing.T) {
	ctx := context.Background()
	srv := ghtest.New(t)
	srv.AddToken(testToken, "redfix")
	src, commits := remoteRepo(t, srv, "acme", "widgets")
	url := srv.CloneURL("acme", "widgets")
	m := mirrors(t, 0)
	ws, err := m.Open(ctx, url, commits[0], t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := os.WriteFile(filepath.Join(src.Dir, "a.txt"), []byte("three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	head, err := src.CommitAll(ctx, "three")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := srv.Git("acme", "widgets", "fetch", "-q", src.Dir, "main:main"); err != nil {
		t.Fatalf("push: %v: %s", err, out)
	}
	branch, commit, err := m.DefaultHead(ctx, url)
	if err != nil || branch != "main" || commit != head {
		t.Fatalf("DefaultHead = %q %q %v, want main %s", branch, commit, err, head)
	}
	if err := ws.Repo.Checkout(ctx, head); err != nil {
		t.Errorf("the head is not in the work tree's mirror: %v", err)
	}
}
