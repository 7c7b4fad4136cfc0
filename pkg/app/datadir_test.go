package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/sandbox"
)

// A one-shot command whose data directory lies outside /tmp and $HOME
// (the sandbox's own directories), as data_dir: /var/lib/redfix would: its
// tests still run. A root redfix's commands run as the sandbox's user,
// who cannot enter the data directory (0700); the run's caches beneath it
// are reached through the data directory hidden by one of the sandbox's
// own. Before, only the run's directory was hidden, and bot triage failed
// every run ("go.mod file not found"). Where redfix is not root its
// commands run as its own user, and this passes either way.
func TestOneShotCommandWithTheDataDirectoryElsewhere(t *testing.T) {
	if _, err := sandbox.New(context.Background(), sandbox.Config{Mode: sandbox.ModeRequired, CacheDir: t.TempDir()}); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must confine: %v", err)
		}
		t.Skipf("this host cannot confine: %v", err)
	}
	clearEnv(t)
	outside, err := os.MkdirTemp("/var/tmp", "redfix-data-")
	if err != nil {
		t.Fatalf("a directory outside /tmp and $HOME: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(outside) })
	// Open like /var/lib; the data directory beneath is redfix's, 0700.
	if err := os.Chmod(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REDFIX_DATA_DIR", filepath.Join(outside, "data"))
	dir, good := escapingRepo(t)
	var stdout, stderr bytes.Buffer
	args := []string{"--repo", dir, "--good", good, "--bad", "HEAD", "--test", "TestAdd", "--reruns", "2"}
	if err := TriageCommand(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("triage with the data directory in %s: %v\n%s", outside, err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Add(2, 3) = -1, want 5") {
		t.Errorf("bot triage did not run the test:\n%s", stdout.String())
	}
}
