package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
)

// go test runs confined and writes nothing into the repository's cache;
// its Go setup (filling goCaches) does, and a build after it reads what
// the setup compiled instead of compiling it again.
func TestGoTestRunsConfinedWithPerRepositoryCache(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go")
	}
	cache := t.TempDir()
	b := confined(t, Config{CacheDir: cache})
	ws := workspace(t)
	files := map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.22\n",
		"m.go":      "package m\n\n// One is 1.\nconst One = 1\n",
		"m_test.go": "package m\nimport \"testing\"\nfunc TestOK(t *testing.T) {}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := WithTree(With(WithRepo(context.Background(), "https://git.example/org/m.git"), b), ws)
	build := func() Result {
		res, err := b.Run(ctx, Cmd{Dir: ws, Args: []string{"go", "build", "-x", "./..."}, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK() {
			t.Fatalf("go build in the sandbox: %+v", res)
		}
		return res
	}
	res, err := b.Run(ctx, Cmd{Dir: ws, Args: []string{"go", "test", "-count=1", "./..."}, Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		t.Fatalf("go test in the sandbox: %+v", res)
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "m-*", "go-build", "*"))
	if len(entries) != 0 {
		t.Fatalf("a test run wrote the repository's build cache: %v", entries)
	}
	if res := build(); !strings.Contains(res.Output, "-p example.com/m ") {
		t.Fatalf("the package was not compiled before any setup:\n%s", res.Output)
	}
	res, err = b.Run(ctx, Cmd{Dir: ws, Args: []string{"go", "build", "./..."}, Setup: true, Fill: goCaches(ctx), Timeout: 5 * time.Minute})
	if err != nil || !res.OK() {
		t.Fatalf("the setup's build: %v %+v", err, res)
	}
	entries, _ = filepath.Glob(filepath.Join(cache, "m-*", "go-build", "*"))
	if len(entries) == 0 {
		t.Fatalf("the setup did not fill the repository's build cache under %s", cache)
	}
	if res := build(); strings.Contains(res.Output, "-p example.com/m ") {
		t.Fatalf("the package was compiled again after the setup filled the cache:\n%s", res.Output)
	}
}

// A Go setup step (Cmd.Setup, filling GoCaches) fetches a module into the
// repository's own module cache, and a build after it reads that cache
// with no proxy to reach; before the setup the same build cannot fetch the
// module.
func TestGoSetupFetchesWhatTheOfflineBuildReads(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go")
	}
	// The host's module cache, and a module proxy in its directory (the
	// sandbox shows that one read-only; its /tmp is private).
	modcache := t.TempDir()
	t.Setenv("GOPROXY", testsvc.GoModuleProxy(t, modcache, "example.com/dep", "v1.0.0", map[string]string{"dep.go": "package dep\n\nconst Two = 2\n"}))
	t.Setenv("GOMODCACHE", modcache)
	t.Setenv("GONOSUMDB", "example.com")
	t.Setenv("GOFLAGS", "-mod=mod")
	b := confined(t, Config{})
	ws := workspace(t)
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.21\n\nrequire example.com/dep v1.0.0\n",
		"m.go":   "package m\n\nimport \"example.com/dep\"\n\n// Four is 4.\nconst Four = dep.Two * 2\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := With(WithRepo(context.Background(), "https://git.example/org/m.git"), b)
	run := func(setup bool, args ...string) Result {
		cmd := Cmd{Dir: ws, Args: args, Setup: setup, Timeout: 5 * time.Minute}
		if setup {
			cmd.Fill = goCaches(ctx) // the proxy is a directory: no registry
		}
		res, err := b.Run(ctx, cmd)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run(false, "go", "build", "./..."); res.OK() {
		t.Fatalf("a build before the setup step: %+v", res)
	}
	if res := run(true, "go", "mod", "download"); !res.OK() {
		t.Fatalf("go mod download as a setup step: %+v", res)
	}
	if res := run(false, "go", "build", "./..."); !res.OK() {
		t.Fatalf("the build after the setup step: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(modcache, "example.com")); err == nil {
		t.Errorf("the setup step wrote the host's module cache")
	}
}

// goCaches are the caches the Go driver's setup fills (pkg/lang/golang):
// the repository's module and build caches, in its cache directory.
func goCaches(ctx context.Context) []string {
	dir := CacheDir(ctx)
	return []string{filepath.Join(dir, "mod"), filepath.Join(dir, "go-build")}
}
