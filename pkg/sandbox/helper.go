package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/redfix/redfix/pkg/egress"
)

// redfix's own programs inside a sandbox (the setup's relay to the egress
// proxy, the Go build cache's program) are redfix's binary itself, bound
// read-only into the sandbox and started with helperMarker as its first
// argument: whatever binary links this package (bot, worker, a test
// binary) serves them from init, before anything else runs.
const helperMarker = "redfix-sandbox-helper"

// Where the sandbox shows the helper, the egress proxy's socket and the
// Go seed: a directory of the sandbox's private /tmp that bubblewrap makes.
const (
	helperDir    = "/tmp/.redfix"
	helperPath   = helperDir + "/helper"
	egressSocket = helperDir + "/egress.sock"
	seedMount    = helperDir + "/go-seed"
)

func init() {
	if len(os.Args) < 3 || os.Args[1] != helperMarker {
		return
	}
	os.Exit(runHelper(os.Args[2], os.Args[3:]))
}

// runHelper runs the helper named name; its exit status is the process's.
func runHelper(name string, args []string) int {
	switch name {
	case "relay":
		// relay [--forward HOST:PORT]... -- COMMAND...
		cfg := egress.RelayConfig{Socket: egressSocket}
		for len(args) > 0 && args[0] != "--" {
			if args[0] == "--forward" && len(args) > 1 {
				cfg.Forward = append(cfg.Forward, args[1])
				args = args[2:]
				continue
			}
			fmt.Fprintf(os.Stderr, "redfix sandbox relay: unknown argument %q\n", args[0])
			return 125
		}
		if len(args) > 0 {
			cfg.Args = args[1:]
		}
		code, err := egress.Relay(context.Background(), cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "redfix sandbox:", err)
			return 125
		}
		return code
	case "gocache":
		if err := serveGoCache(os.Stdin, os.Stdout, goCacheConfigFromEnv()); err != nil {
			fmt.Fprintln(os.Stderr, "redfix sandbox go cache:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "redfix sandbox: unknown helper %q\n", name)
	return 125
}

// helperCommand is the command line that starts helper name inside the
// sandbox.
func helperCommand(name string, args ...string) []string {
	return append([]string{helperPath, helperMarker, name}, args...)
}

var (
	exeOnce sync.Once
	exePath string
	exeErr  error
)

// executable is this process's binary, which the sandbox shows as its
// helper.
func executable() (string, error) {
	exeOnce.Do(func() {
		p, err := os.Executable()
		if err == nil {
			p, err = filepath.EvalSymlinks(p)
		}
		if err == nil && strings.HasSuffix(p, " (deleted)") {
			err = fmt.Errorf("the binary %s was replaced since it started", p)
		}
		exePath, exeErr = p, err
	})
	return exePath, exeErr
}
