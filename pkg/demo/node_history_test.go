package demo

import (
	"encoding/json"
	"path"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// nodeSamples are the Node samples' languages and their runners' pins.
var nodeSamples = map[string]map[string]string{
	"typescript": {"vite": "8.3.8", "vitest": "4.1.12", "typescript": "7.0.2"},
	"javascript": {"jest": "30.5.2"},
}

// historyFile is the content of name as the sample's history in lang
// leaves it after its commits up to and including upto (1-based), and
// whether any of those commits wrote it.
func historyFile(t *testing.T, lang, name string, upto int) (string, bool) {
	t.Helper()
	entries, err := history.ReadDir(path.Join("history", lang))
	if err != nil {
		t.Fatal(err)
	}
	var data string
	found := false
	for i, e := range entries {
		if i >= upto {
			break
		}
		raw, err := history.ReadFile(path.Join("history", lang, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range txtar.Parse(raw).Files {
			if f.Name == name {
				data, found = string(f.Data), true
			}
		}
	}
	return data, found
}

// The Node samples' dependencies are pinned exactly, in package.json and
// in a lockfile that carries no registry hosts; node_modules is ignored.
func TestNodeSamplesPinTheirRunnersWithoutRegistryHosts(t *testing.T) {
	for lang, pins := range nodeSamples {
		t.Run(lang, func(t *testing.T) {
			manifest, ok := historyFile(t, lang, "package.json", 6)
			if !ok {
				t.Fatal("no package.json")
			}
			var pkg struct {
				DevDependencies map[string]string `json:"devDependencies"`
			}
			if err := json.Unmarshal([]byte(manifest), &pkg); err != nil {
				t.Fatal(err)
			}
			if len(pkg.DevDependencies) != len(pins) {
				t.Errorf("devDependencies = %v, want %v", pkg.DevDependencies, pins)
			}
			for name, v := range pins {
				if pkg.DevDependencies[name] != v {
					t.Errorf("%s is %q in package.json, want exactly %s", name, pkg.DevDependencies[name], v)
				}
			}
			lock, ok := historyFile(t, lang, "package-lock.json", 6)
			if !ok {
				t.Fatal("no package-lock.json")
			}
			var lf struct {
				LockfileVersion int `json:"lockfileVersion"`
				Packages        map[string]struct {
					Version  string `json:"version"`
					Resolved string `json:"resolved"`
				} `json:"packages"`
			}
			if err := json.Unmarshal([]byte(lock), &lf); err != nil {
				t.Fatal(err)
			}
			if lf.LockfileVersion != 3 {
				t.Errorf("lockfileVersion %d, want 3", lf.LockfileVersion)
			}
			for name, v := range pins {
				if got := lf.Packages["node_modules/"+name].Version; got != v {
					t.Errorf("the lockfile has %s %q, want %s", name, got, v)
				}
			}
			if strings.Contains(lock, `"resolved"`) {
				t.Error("the lockfile names where its packages were resolved (a registry host)")
			}
			if ignore, _ := historyFile(t, lang, ".gitignore", 6); !regexp.MustCompile(`(?m)^node_modules/$`).MatchString(ignore) {
				t.Errorf(".gitignore does not ignore node_modules:\n%s", ignore)
			}
		})
	}
}

// The breaking commit (the fourth) changes more than the line that breaks
// the test, so that the honest fix is not a revert of it.
func TestNodeSamplesBreakInsideALargerChange(t *testing.T) {
	for lang, c := range map[string]struct{ file, bug, fixed string }{
		"typescript": {"src/pricing.ts", "if (qty > t.minQty) {", "if (qty >= t.minQty"},
		"javascript": {"src/rates.js", "return v - grams > BULKY ? v : grams;", "v - grams >= BULKY ? v : grams"},
	} {
		t.Run(lang, func(t *testing.T) {
			before, _ := historyFile(t, lang, c.file, 3)
			after, _ := historyFile(t, lang, c.file, 4)
			if !strings.Contains(before, c.fixed) || strings.Contains(before, c.bug) {
				t.Errorf("the third commit's %s does not hold the correct comparison %q", c.file, c.fixed)
			}
			if !strings.Contains(after, c.bug) {
				t.Errorf("the fourth commit's %s does not hold the bug %q", c.file, c.bug)
			}
			changed := 0
			bl, al := strings.Split(before, "\n"), strings.Split(after, "\n")
			seen := map[string]bool{}
			for _, l := range bl {
				seen[l] = true
			}
			for _, l := range al {
				if !seen[l] {
					changed++
				}
			}
			if changed < 5 {
				t.Errorf("the fourth commit changes %d lines of %s, want a larger change than the bug", changed, c.file)
			}
		})
	}
}
