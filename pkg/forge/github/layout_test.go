package github_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPackageLayout keeps the sides of the reports stream apart: the
// webhook endpoint (before the stream) and the processing of stored
// deliveries (after it) share only pkg/forge/github/event, and the client package
// depends on none of them.
func TestPackageLayout(t *testing.T) {
	const mod = "github.com/redfix/redfix/"
	rules := []struct {
		pkg       string
		forbidden []string
		// needs is a dependency the package has, so that an empty or wrong
		// listing does not pass for a clean one.
		needs string
	}{
		{"pkg/forge/github/webhook", []string{"pkg/forge/github/deliveries", "pkg/forge/github/runreport", "pkg/store"}, mod + "pkg/forge/github/event"},
		{"pkg/forge/github/deliveries", []string{"pkg/forge/github/webhook"}, mod + "pkg/forge/github/event"},
		{"pkg/forge/github/event", []string{"pkg/forge/github/webhook", "pkg/forge/github/deliveries", "pkg/ingest", "pkg/store"}, "github.com/google/go-github/v62/github"},
		{"pkg/forge/github", []string{"pkg/forge/github/webhook", "pkg/forge/github/deliveries", "pkg/forge/github/event", "pkg/forge/github/runreport"}, "github.com/google/go-github/v62/github"},
	}
	args := []string{"list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}
	for _, r := range rules {
		args = append(args, mod+r.pkg)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 {
			deps[f[0]] = f[1:]
		}
	}
	for _, r := range rules {
		d, ok := deps[mod+r.pkg]
		if !ok || !slices.Contains(d, r.needs) {
			t.Errorf("%s: dependencies %v do not hold %s", r.pkg, d, r.needs)
			continue
		}
		for _, f := range r.forbidden {
			if slices.Contains(d, mod+f) {
				t.Errorf("%s depends on %s", r.pkg, f)
			}
		}
	}
}
