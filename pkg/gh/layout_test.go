package gh_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPackageLayout keeps the sides of the reports stream apart: the
// webhook endpoint (before the stream) and the processing of stored
// deliveries (after it) share only pkg/gh/event, and the client package
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
		{"pkg/gh/webhook", []string{"pkg/gh/deliveries", "pkg/gh/runreport", "pkg/store"}, mod + "pkg/gh/event"},
		{"pkg/gh/deliveries", []string{"pkg/gh/webhook"}, mod + "pkg/gh/event"},
		{"pkg/gh/event", []string{"pkg/gh/webhook", "pkg/gh/deliveries", "pkg/ingest", "pkg/store"}, "github.com/google/go-github/v62/github"},
		{"pkg/gh", []string{"pkg/gh/webhook", "pkg/gh/deliveries", "pkg/gh/event", "pkg/gh/runreport"}, "github.com/google/go-github/v62/github"},
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
