package testsvc

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binaries are redfix's commands (cmd/bot, cmd/worker) built once per
// test binary and build tags, into dir.
type Binaries struct {
	once sync.Once
	dir  string
	err  error
}

// Build builds the commands with the given build tags (none: a release
// build) under dir, once; later calls return the same binaries. It builds
// with -trimpath, as the Dockerfile does, so that the toolchain's cache
// serves both (deploy's TestDockerfileBuildsTheBinaries).
func (b *Binaries) Build(t testing.TB, dir string, tags ...string) (bot, worker string) {
	t.Helper()
	b.once.Do(func() {
		b.dir = dir
		args := []string{"build", "-trimpath", "-o", dir + string(filepath.Separator)}
		if len(tags) > 0 {
			args = append(args, "-tags", strings.Join(tags, ","))
		}
		args = append(args, "github.com/redfix/redfix/cmd/bot", "github.com/redfix/redfix/cmd/worker")
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return filepath.Join(b.dir, "bot"), filepath.Join(b.dir, "worker")
}
