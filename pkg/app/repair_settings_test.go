package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
)

// zoneCommits are a module whose test passes only in New York's time zone
// (as a date library's suite may need, and its CI sets): at 00:00 UTC on 1
// January 2024 it is 19:00 there, evening. The second commit adds Weekend
// and, beside it, makes the evening start an hour late.
var zoneCommits = []map[string]string{
	{
		"go.mod": "module example.com/zone\n\ngo 1.22\n",
		"zone.go": "package zone\n\nimport \"time\"\n\n// Hour is the local hour at the Unix time ts.\nfunc Hour(ts int64) int { return time.Unix(ts, 0).Hour() }\n\n" +
			"// Evening says whether the Unix time ts is 19:00 or later, local time.\nfunc Evening(ts int64) bool {\n\treturn Hour(ts) >= 19\n}\n",
		"zone_test.go": "package zone\n\nimport \"testing\"\n\n" +
			"// In New York, midnight UTC on 1 January 2024 is 19:00.\n" +
			"func TestEvening(t *testing.T) {\n\tif !Evening(1704067200) {\n\t\tt.Fatalf(\"Evening at %d:00 = false, want true\", Hour(1704067200))\n\t}\n}\n",
	},
	{
		"zone.go": "package zone\n\nimport \"time\"\n\n// Hour is the local hour at the Unix time ts.\nfunc Hour(ts int64) int { return time.Unix(ts, 0).Hour() }\n\n" +
			"// Evening says whether the Unix time ts is 19:00 or later, local time.\nfunc Evening(ts int64) bool {\n\treturn Hour(ts) > 19\n}\n\n" +
			"// Weekend says whether the Unix time ts falls on a Saturday or a Sunday.\nfunc Weekend(ts int64) bool {\n\td := time.Unix(ts, 0).Weekday()\n\treturn d == time.Saturday || d == time.Sunday\n}\n",
	},
	{"README.md": "zone tells the local time of day.\n"},
}

// zoneRepo makes the zone module's history, its .redfix.yaml setting the
// time zone its tests need when settings is true; it returns the checkout
// and the commits, oldest first.
func zoneRepo(t *testing.T, settings bool) (string, []string) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "zone")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var shas []string
	for i, files := range zoneCommits {
		if i == 0 && settings {
			files[".redfix.yaml"] = "version: 1\ntests:\n  env:\n    TZ: America/New_York\n"
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		delete(files, ".redfix.yaml")
		sha, err := repo.CommitAll(ctx, "zone: commit "+string(rune('1'+i)))
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, sha)
	}
	return dir, shas
}

// A repository whose tests need a time zone, as its CI sets: with its
// .redfix.yaml naming the variable, worker repair reproduces the failure
// with it (the test passes at CI's green commit), bisects to the commit
// that broke it, repairs it and passes the gates; without, the test fails
// at the green commit too, and repair refuses, naming the test and that
// commit and pointing to the tests: section, rather than repair a
// failure of the environment.
func TestRepairRunsTheTestsWithTheRepositorysSettings(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()

	dir, shas := zoneRepo(t, true)
	out := filepath.Join(t.TempDir(), "prs")
	var stdout, stderr bytes.Buffer
	if err := Repair(ctx, []string{"--repo", dir, "--test", "TestEvening", "--good", shas[0], "--reruns", "2", "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("repair with the repository's settings: %v\n%s", err, stdout.String())
	}
	if !strings.Contains(stdout.String(), "test settings (.redfix.yaml at ") || !strings.Contains(stdout.String(), "TZ=America/New_York") {
		t.Errorf("repair does not say which test settings it ran with:\n%s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "blame: "+task.Short(shas[1])) {
		t.Errorf("repair does not blame %s:\n%s", task.Short(shas[1]), stdout.String())
	}
	pr := readPR(t, out)
	if !strings.Contains(pr.patch, "+\treturn Hour(ts) >= 19") || strings.Contains(pr.patch, "-func Weekend") {
		t.Errorf("the patch does not restore the evening's start alone:\n%s", pr.patch)
	}
	if !strings.Contains(pr.body, "TZ=America/New_York") {
		t.Errorf("the pull request does not show the test settings its evidence ran with:\n%s", pr.body)
	}

	dir, shas = zoneRepo(t, false)
	stdout.Reset()
	err := Repair(ctx, []string{"--repo", dir, "--test", "TestEvening", "--good", shas[0], "--reruns", "2", "--out", t.TempDir()}, &stdout, &stderr)
	if err == nil {
		t.Fatalf("repair without the settings went on:\n%s", stdout.String())
	}
	for _, want := range []string{"not reproducible here", "TestEvening", task.Short(shas[0]), "tests: section"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("repair's refusal %q does not say %q", err, want)
		}
	}
}

// bot triage, worker tool and worker validate read the clone's
// .redfix.yaml as the service does: with the file's time zone, triage
// bisects the zone module to the commit that broke it, run_tests fails
// at 19:00 (0:00 in UTC), and validate accepts the fix (its oracle runs
// the test, which fails in UTC whatever the fix). Each assertion fails
// with the settings left out of its command (checked by switching them
// off); the refusal without them is worker repair's, the same
// investigation as triage's (TestRepairRunsTheTestsWithTheRepositorysSettings).
func TestTriageToolAndValidateRunTheTestsWithTheRepositorysSettings(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	dir, shas := zoneRepo(t, true)
	var stdout, stderr bytes.Buffer
	if err := triageCommand(ctx, []string{"--repo", dir, "--test", "TestEvening", "--good", shas[0], "--reruns", "2", "--json"}, noEnv, &stdout, &stderr); err != nil {
		t.Fatalf("triage with the settings: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"blame": "`+shas[1]) {
		t.Errorf("triage with the settings does not blame %s:\n%s", task.Short(shas[1]), stdout.String())
	}
	if !strings.Contains(stderr.String(), "TZ=America/New_York") {
		t.Errorf("triage does not say which test settings it ran with:\n%s", stderr.String())
	}

	// worker tool's run_tests, as a job's: the failure says which hour
	// the test saw.
	stdout.Reset()
	if err := Tool(ctx, []string{"--repo", dir, "--test", "TestEvening", "run_tests"}, &stdout, &stderr); err != nil && !errors.Is(err, ErrToolProblem) {
		t.Fatalf("tool run_tests: %v", err)
	}
	if !strings.Contains(stdout.String(), "at 19:00") {
		t.Errorf("run_tests does not fail at 19:00, New York's hour:\n%s", stdout.String())
	}

	fixed := strings.Replace(zoneCommits[1]["zone.go"], "Hour(ts) > 19", "Hour(ts) >= 19", 1)
	l := ledger{dir: dir}
	patch := writePatch(t, l.patchOf(t, map[string]string{"zone.go": fixed}))
	stdout.Reset()
	if err := validateCommand(ctx, []string{"--repo", dir, "--patch", patch, "--test", "TestEvening", "--blame", shas[1]}, noEnv, &stdout, &stderr); err != nil {
		t.Errorf("validate with the settings: %v\n%s", err, stdout.String())
	}
}
