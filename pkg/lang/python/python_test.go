package python

import (
	"testing"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
)

func TestDetect(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		files map[string]string
		want  int
	}{
		{map[string]string{"pyproject.toml": "[project]\n"}, 90},
		{map[string]string{"setup.py": ""}, 90},
		{map[string]string{"pytest.ini": ""}, 90},
		{map[string]string{"conftest.py": ""}, 90},
		{map[string]string{"script.py": ""}, 10},
		{map[string]string{"README": "", "pkg/deep.py": ""}, 0},
	} {
		if got := (Driver{}).Detect(repo(t, c.files)); got != c.want {
			t.Errorf("Detect(%v) = %d, want %d", c.files, got, c.want)
		}
	}
	// A repository with both a go.mod and a pyproject.toml is Go's unless
	// the configuration says otherwise.
	both := repo(t, map[string]string{"go.mod": "module example.com/m\n", "pyproject.toml": ""})
	ds := lang.New(golang.Driver{}, Driver{})
	if d, err := ds.For("example.com/m", both); err != nil || d.Name() != "go" {
		t.Errorf("For(go.mod and pyproject.toml) = %v, %v", d, err)
	}
	if err := ds.Override("example.com/*", "python"); err != nil {
		t.Fatal(err)
	}
	if d, err := ds.For("example.com/m", both); err != nil || d.Name() != "python" {
		t.Errorf("an override to python = %v, %v", d, err)
	}
}

func TestFileRules(t *testing.T) {
	t.Parallel()
	d := Driver{}
	for rel, want := range map[string]bool{
		"tests/test_x.py":     true,
		"pkg/x_test.py":       true,
		"test_top.py":         true,
		"conftest.py":         true,
		"pkg/conftest.py":     true,
		"tests/helpers.py":    true,
		"test/data/in.json":   true,
		"pkg/testing.py":      false,
		"pkg/contest.py":      false,
		"pkg/tests_util.py":   false,
		"src/latest_stuff.py": false,
	} {
		if got := d.IsTestFile(rel); got != want {
			t.Errorf("IsTestFile(%s) = %v", rel, got)
		}
	}
	for rel, want := range map[string]bool{
		"tests/data/expected.json":             true,
		"tests/fixtures/sample.py":             true,
		"pkg/testdata/in.txt":                  true,
		"tests/__snapshots__/test_x.ambr":      true,
		"tests/snapshots/x.txt":                true,
		"snap.ambr":                            true,
		"tests/test_x.py":                      false,
		"pkg/data.json":                        false,
		"tests/cassettes/test_api/record.yaml": true,
	} {
		if got := d.IsTestData(rel); got != want {
			t.Errorf("IsTestData(%s) = %v", rel, got)
		}
	}
	if !d.IsSource("pkg/x.py") || d.IsSource("pkg/x.pyc") || d.IsSource("README.md") {
		t.Error("IsSource")
	}
	for rel, want := range map[string]string{
		"calc.py":               ".",
		"pkg/sub/mod.py":        "pkg/sub",
		"tests/test_x.py":       "tests",
		"./tests/unit/test.py":  "tests/unit",
		"README.md":             "",
		".venv/lib/x.py":        "",
		"pkg/__pycache__/m.py":  "",
		"../elsewhere/x.py":     "",
		"node_modules/p/x.py":   "",
		"pkg/.hidden/secret.py": "",
	} {
		got, ok := d.PackageOf("/nowhere", rel)
		if ok != (want != "") || got != want {
			t.Errorf("PackageOf(%s) = %q, %v; want %q", rel, got, ok, want)
		}
	}
}
