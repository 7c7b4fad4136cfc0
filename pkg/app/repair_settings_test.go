package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
)

// worker repair reads the repository's .redfix.yaml as a worker does: its
// test settings reach the reproduction too. A test that passes only in New
// York's time zone, which the file sets, passes at HEAD: nothing to repair
// (without the settings it failed there, and the agent went after it).
func TestRepairRunsTheTestsWithTheRepositorysSettings(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "zone")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"go.mod":       "module example.com/zone\n\ngo 1.22\n",
		".redfix.yaml": "version: 1\ntests:\n  env:\n    TZ: America/New_York\n",
		"zone.go":      "package zone\n\nimport \"time\"\n\n// Hour is the local hour at the Unix time ts.\nfunc Hour(ts int64) int { return time.Unix(ts, 0).Hour() }\n",
		"zone_test.go": "package zone\n\nimport \"testing\"\n\n" +
			"// In New York, midnight UTC on 1 January 2024 is 19:00.\n" +
			"func TestHour(t *testing.T) {\n\tif got := Hour(1704067200); got != 19 {\n\t\tt.Fatalf(\"Hour = %d, want 19\", got)\n\t}\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := repo.CommitAll(ctx, "zone: Hour"); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = Repair(ctx, []string{"--repo", dir, "--test", "TestHour", "--blame", "HEAD", "--reruns", "2", "--out", t.TempDir()}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "nothing to repair") {
		t.Fatalf("repair: %v, want the test passing with the repository's settings\n%s", err, stdout.String())
	}
	if !strings.Contains(stdout.String(), "test settings (.redfix.yaml at ") || !strings.Contains(stdout.String(), "TZ=America/New_York") {
		t.Errorf("repair does not say which test settings it ran with:\n%s", stdout.String())
	}
}
