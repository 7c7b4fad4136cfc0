package golang

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/sandbox"
)

// Setup fetches the modules go.mod requires into the repository's module
// cache and compiles their packages into its build cache: a build after it
// compiles the checkout's own package, not the dependency, with no module
// proxy to reach. Before the setup the same build cannot fetch the module.
func TestSetupFillsTheDependenciesTheTestsRead(t *testing.T) {
	modcache := t.TempDir()
	t.Setenv("GOPROXY", testsvc.GoModuleProxy(t, modcache, "example.com/dep", "v1.0.0", map[string]string{"dep.go": "package dep\n\n// Two is 2.\nconst Two = 2\n\n// Double doubles n.\nfunc Double(n int) int { return n * Two }\n"}))
	t.Setenv("GOMODCACHE", modcache)
	t.Setenv("GONOSUMDB", "example.com")
	t.Setenv("GOFLAGS", "-mod=mod")
	box, err := sandbox.New(context.Background(), sandbox.Config{Mode: sandbox.ModeRequired, CacheDir: t.TempDir()})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must confine: %v", err)
		}
		t.Skipf("this host cannot confine: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.21\n\nrequire example.com/dep v1.0.0\n",
		"m.go":   "package m\n\nimport \"example.com/dep\"\n\n// Four is 4.\nvar Four = dep.Double(2)\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := sandbox.WithTree(sandbox.WithRepo(sandbox.With(context.Background(), box), "example.com/m"), dir)
	build := func() sandbox.Result {
		t.Helper()
		res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: []string{"sh", "-c", "go build -x ./... 2>&1 | grep -oE ' -p [^ ]+ ' | sort -u; exit ${PIPESTATUS:-0}"}, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := build(); strings.Contains(res.Output, "-p example.com/m ") {
		t.Fatalf("a build before the setup compiled the module: %+v", res)
	}
	if err := (Driver{}).Setup(ctx, dir); err != nil {
		t.Fatal(err)
	}
	res := build()
	if !strings.Contains(res.Output, "-p example.com/m ") || strings.Contains(res.Output, "-p example.com/dep ") {
		t.Fatalf("after the setup a build should compile the checkout's package and read the dependency:\n%s", res.Output)
	}
}
