package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/redfix/redfix/pkg/config"
)

func TestLanguagesDetectAndOverride(t *testing.T) {
	goRepo, pyRepo := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(goRepo, "go.mod"), []byte("module m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pyRepo, "pyproject.toml"), []byte("[project]\nname = \"p\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Languages.Repos = []config.LanguageRepo{{Pattern: "acme/*", Driver: "python"}}
	d, err := languages(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ repo, dir, want string }{
		{"other/x", goRepo, "go"},
		{"other/x", pyRepo, "python"},
		{"acme/x", goRepo, "python"},
	} {
		dr, err := d.For(c.repo, c.dir)
		if err != nil || dr.Name() != c.want {
			t.Errorf("For(%s, %s) = %v, %v; want %s", c.repo, c.dir, dr, err, c.want)
		}
	}
	if _, err := d.For("other/x", t.TempDir()); err == nil {
		t.Error("an empty repository has a driver")
	}
}
