package node

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/redfix/redfix/pkg/lang"
)

var _ lang.Driver = Driver{}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int
	}{
		{"vitest devDependency", map[string]string{"package.json": `{"devDependencies":{"vitest":"4.1.12"}}`}, 95},
		{"jest in the test script", map[string]string{"package.json": `{"scripts":{"test":"jest --ci"}}`}, 95},
		{"node --test", map[string]string{"package.json": `{"scripts":{"test":"node --test test/"}}`}, 95},
		{"runner config only", map[string]string{"vitest.config.ts": "export default {}\n"}, 95},
		{"mocharc", map[string]string{".mocharc.yml": "spec: test\n", "package.json": `{}`}, 95},
		{"another test script", map[string]string{"package.json": `{"scripts":{"test":"ava"}}`}, 50},
		{"npm init's test script", map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`}, 20},
		{"tooling only", map[string]string{"package.json": `{"devDependencies":{"prettier":"3.0.0"}}`, "package-lock.json": "{}"}, 20},
		{"lockfile only", map[string]string{"yarn.lock": ""}, 20},
		{"a script", map[string]string{"build.js": "console.log(1)\n"}, 5},
		{"nothing", map[string]string{"README.md": "hi\n"}, 0},
		{"broken package.json", map[string]string{"package.json": `{`}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, c.files)
			if got := (Driver{}).Detect(dir); got != c.want {
				t.Errorf("Detect = %d, want %d", got, c.want)
			}
		})
	}
}

// A package.json that is a link is not followed.
func TestDetectFollowsNoLink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "package.json")
	write(t, filepath.Dir(outside), map[string]string{"package.json": `{"devDependencies":{"jest":"30.5.2"}}`})
	if err := os.Symlink(outside, filepath.Join(dir, "package.json")); err != nil {
		t.Fatal(err)
	}
	if got := (Driver{}).Detect(dir); got != 0 {
		t.Errorf("Detect through a link = %d, want 0", got)
	}
}

func TestFileKinds(t *testing.T) {
	d := Driver{}
	for _, c := range []struct {
		rel                string
		test, data, source bool
		pkg                string
		pkgOK              bool
	}{
		{"src/price.ts", false, false, true, "src", true},
		{"src/price.test.ts", true, false, true, "src/price.test.ts", true},
		{"src/Button.spec.tsx", true, false, true, "src/Button.spec.tsx", true},
		{"lib/__tests__/x.js", true, false, true, "lib/__tests__/x.js", true},
		{"test/words.test.js", true, false, true, "test/words.test.js", true},
		{"tests/helpers.mjs", true, false, true, "tests/helpers.mjs", true},
		{"test/fixtures/in.json", true, true, false, "", false},
		{"src/__snapshots__/price.test.ts.snap", false, true, false, "", false},
		{"src/__mocks__/fs.js", false, true, true, "src/__mocks__", true},
		{"vitest.config.ts", true, false, true, ".", true},
		{"jest.config.cjs", true, false, true, ".", true},
		{".mocharc.yml", true, false, false, "", false},
		{"index.cjs", false, false, true, ".", true},
		{"types.d.ts", false, false, true, ".", true},
		{"node_modules/x/index.js", false, false, true, "", false},
		{"dist/index.js", false, false, true, "", false},
		{"README.md", false, false, false, "", false},
		{"src/latest.ts", false, false, true, "src", true},
		{"src/contest.js", false, false, true, "src", true},
	} {
		if got := d.IsTestFile(c.rel); got != c.test {
			t.Errorf("IsTestFile(%s) = %v", c.rel, got)
		}
		if got := d.IsTestData(c.rel); got != c.data {
			t.Errorf("IsTestData(%s) = %v", c.rel, got)
		}
		if got := d.IsSource(c.rel); got != c.source {
			t.Errorf("IsSource(%s) = %v", c.rel, got)
		}
		if pkg, ok := d.PackageOf("", c.rel); pkg != c.pkg || ok != c.pkgOK {
			t.Errorf("PackageOf(%s) = %q, %v; want %q, %v", c.rel, pkg, ok, c.pkg, c.pkgOK)
		}
	}
}
