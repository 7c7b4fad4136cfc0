package app

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/lang/node"
)

func TestLanguagesDetectAndOverride(t *testing.T) {
	goRepo, pyRepo := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(goRepo, "go.mod"), []byte("module m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pyRepo, "pyproject.toml"), []byte("[project]\nname = \"p\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A TypeScript repository tested with vitest, and one whose
	// package.json only holds tooling next to Python's markers.
	tsRepo, toolingRepo := t.TempDir(), t.TempDir()
	for dir, files := range map[string]map[string]string{
		tsRepo:      {"package.json": `{"devDependencies": {"vitest": "4.1.12"}}`},
		toolingRepo: {"package.json": `{"devDependencies": {"prettier": "3.0.0"}}`, "pyproject.toml": "[project]\nname = \"p\"\n"},
	} {
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg := config.Default()
	cfg.Languages.Repos = []config.LanguageRepo{{Pattern: "acme/*", Driver: "python"}, {Pattern: "web/*", Driver: "node"}}
	cfg.Languages.Node = config.Node{Node: "/opt/node/bin/node", CacheDir: "/var/cache/redfix-node", InstallScripts: true, SetupTimeout: 7, CheckTimeout: 9}
	d, err := languages(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ repo, dir, want string }{
		{"other/x", goRepo, "go"},
		{"other/x", pyRepo, "python"},
		{"acme/x", goRepo, "python"},
		{"other/x", tsRepo, "node"},
		{"other/x", toolingRepo, "python"},
		{"web/x", pyRepo, "node"},
	} {
		dr, err := d.For(c.repo, c.dir)
		if err != nil || dr.Name() != c.want {
			t.Errorf("For(%s, %s) = %v, %v; want %s", c.repo, c.dir, dr, err, c.want)
		}
	}
	if _, err := d.For("other/x", t.TempDir()); err == nil {
		t.Error("an empty repository has a driver")
	}
	// The node driver is made from languages.node.
	dr, err := d.For("other/x", tsRepo)
	if err != nil {
		t.Fatal(err)
	}
	want := node.Driver{Node: "/opt/node/bin/node", CacheDir: "/var/cache/redfix-node", InstallScripts: true, Timeout: testTimeout, SetupTimeout: 7, CheckTimeout: 9}
	if nd, ok := dr.(node.Driver); !ok || !reflect.DeepEqual(nd, want) {
		t.Errorf("node driver = %#v, want %#v", dr, want)
	}
}
