package all

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/langtest/toylang"
)

// The registered drivers, and the configuration's overrides, an unknown
// driver refused with the ones it could have named.
func TestNew(t *testing.T) {
	var cfg config.Languages
	d, err := New(cfg, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(d.Names(), " "); got != "go node python" {
		t.Errorf("drivers = %s", got)
	}
	cfg.Repos = []config.LanguageRepo{{Pattern: "acme/*", Driver: "cobol"}}
	if _, err := New(cfg, time.Minute, nil); err == nil || !strings.Contains(err.Error(), "go, node, python") {
		t.Errorf("an override naming no driver: %v", err)
	}
}

// A language is a package and one line: the toy language, which exists
// only in the tests (pkg/lang/langtest/toylang, conformant as every
// driver is), registered with the others by one line, is chosen for its
// checkouts, and the others stay chosen for theirs.
func TestALanguageIsAPackageAndOneLine(t *testing.T) {
	drivers := lang.New(append(Drivers(config.Languages{}, time.Minute, nil),
		toylang.Driver{}, // the registration line
	)...)
	for _, c := range []struct{ marker, want string }{{"toy.mod", "toy"}, {"go.mod", "go"}, {"pyproject.toml", "python"}} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, c.marker), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if d, err := drivers.For("example.com/"+c.want, dir); err != nil || d.Name() != c.want {
			t.Errorf("a checkout with %s: driver %v, %v; want %s", c.marker, d, err, c.want)
		}
	}
}
