package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A setup fills only its repository's caches, for its trust: a crafted
// Fill naming the trusted cache from an untrusted run, another
// repository's cache, the cache directory itself, or a link in the
// repository's cache that leads to another's, is refused, and the command
// never runs to write there. The repository's own cache is filled.
func TestSetupFillsOnlyItsRepositorysCache(t *testing.T) {
	root := t.TempDir()
	b := confined(t, Config{CacheDir: root})
	ws := workspace(t)
	trusted := WithTree(With(WithRepo(context.Background(), "https://git.example/org/a.git"), b), ws)
	run := WithUntrusted(trusted)
	other := WithTree(With(WithRepo(context.Background(), "https://git.example/org/b.git"), b), ws)
	fill := func(dir string) (Result, error) {
		return b.Run(run, Cmd{Dir: ws, Args: []string{"sh", "-c", "echo poisoned > " + dir + "/planted"}, Setup: true, Fill: []string{dir}, Timeout: time.Minute})
	}
	// The caches exist, as they do once their runs have set them up.
	for _, dir := range []string{CacheDir(trusted), filepath.Join(CacheDir(other), "mod"), CacheDir(run)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(CacheDir(run), "linked")
	if err := os.Symlink(filepath.Join(CacheDir(other), "mod"), link); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{
		"the trusted cache, from an untrusted run": filepath.Join(CacheDir(trusted), "go-build"),
		"another repository's cache":               filepath.Join(CacheDir(other), "mod"),
		"the cache directory itself":               root,
		"a link to another repository's cache":     link,
	} {
		res, err := fill(dir)
		if err == nil {
			t.Errorf("%s: a setup filled %s: %+v", name, dir, res)
		}
		if _, err := os.Stat(filepath.Join(dir, "planted")); err == nil {
			t.Errorf("%s: a setup wrote %s", name, dir)
		}
	}
	own := filepath.Join(CacheDir(run), "go-build")
	if res, err := fill(own); err != nil || !res.OK() {
		t.Fatalf("the repository's own cache: %v %+v", err, res)
	}
	if _, err := os.Stat(filepath.Join(own, "planted")); err != nil {
		t.Errorf("the setup did not fill its repository's cache: %v", err)
	}
}
