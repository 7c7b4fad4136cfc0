package node

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/sandbox"
)

// poison is a mocha test that writes into node_modules: into a package it
// loads, and a new file beside it.
const poison = `words: a test that writes into node_modules

-- test/poison.test.js --
const fs = require('fs');
const path = require('path');

describe('poison', () => {
  it('writes into node_modules', () => {
    const pkg = require.resolve('mocha/package.json');
    fs.writeFileSync(path.join(path.dirname(pkg), 'poisoned.js'), 'module.exports = 1;\n');
    fs.appendFileSync(pkg, '\n');
  });
});
`

// node_modules is made once per lockfile and reused by the next setup;
// a test that writes into it fails, and the cache stays as setup made it.
// Unconfined (the boundary off), the same test poisons the cache the next
// job would use.
func TestSetupCachesAndProtectsNodeModules(t *testing.T) {
	nodetest.Require(t)
	dir, _ := nodetest.History(t, append(append([]string(nil), nodetest.Words...), poison)...)
	ctx := nodetest.Confined(t, "o/words")
	// The default cache: in the repository's sandbox cache, which its
	// commands may write.
	d := Driver{}
	if err := d.Setup(ctx, dir); err != nil {
		t.Fatal(err)
	}
	modules, err := d.prepare(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(modules, sandbox.CacheDir(ctx)+"/node/") {
		t.Fatalf("node_modules at %s, want it in the repository's cache", modules)
	}
	ready := filepath.Join(filepath.Dir(modules), readyFile)
	before, err := os.Stat(ready)
	if err != nil {
		t.Fatal(err)
	}
	// Another checkout of the same lockfile: the same node_modules, not
	// made again.
	other, _ := nodetest.History(t, nodetest.Words...)
	if err := d.Setup(ctx, other); err != nil {
		t.Fatal(err)
	}
	again, err := d.prepare(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(ready)
	if err != nil || again != modules || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("the second setup made node_modules again (%s, then %s)", modules, again)
	}
	pkg := filepath.Join(modules, "mocha", "package.json")
	orig, err := os.ReadFile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	const test = "test/poison.test.js::poison > writes into node_modules"
	o, err := d.Run(ctx, dir, []string{test}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Failed) != 1 || !strings.Contains(o.Failed[0].Message, "read-only file system") {
		t.Fatalf("the poisoning test did not fail on a read-only node_modules: %+v (%s)\n%s", o.Failed, o.Summary(), o.Output)
	}
	if data, _ := os.ReadFile(pkg); string(data) != string(orig) {
		t.Fatal("the test changed the cache's mocha/package.json")
	}
	if _, err := os.Lstat(filepath.Join(modules, "mocha", "poisoned.js")); err == nil {
		t.Fatal("the test wrote into the cache")
	}
	clean(t, dir)

	// The boundary off (no sandbox, the same cache): the same run poisons
	// the cache.
	box, err := sandbox.New(ctx, sandbox.Config{Mode: sandbox.ModeOff, CacheDir: sandbox.From(ctx).Config().CacheDir})
	if err != nil {
		t.Fatal(err)
	}
	o, err = d.Run(sandbox.With(ctx, box), dir, []string{test}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Passed) != 1 {
		t.Fatalf("with node_modules writable the poisoning test passes: %s\n%s", o.Summary(), o.Output)
	}
	if _, err := os.Lstat(filepath.Join(modules, "mocha", "poisoned.js")); err != nil {
		t.Fatalf("with node_modules writable the cache is poisoned (the test shows nothing otherwise): %v", err)
	}
	// Leave the next run a clean cache.
	_ = os.RemoveAll(filepath.Dir(modules))
}

// A lockfile whose package manager is not installed is an error that
// names it.
func TestSetupNamesAMissingManager(t *testing.T) {
	// A PATH of node and npm alone: pnpm is missing whatever the host has.
	bin := t.TempDir()
	for _, name := range []string{"node", "npm"} {
		if p, err := exec.LookPath(name); err == nil {
			if err := os.Symlink(p, filepath.Join(bin, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Setenv("PATH", bin)
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"package.json":   `{"devDependencies":{"vitest":"4.1.12"}}`,
		"pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
	})
	err := Driver{}.Setup(t.Context(), dir)
	if err == nil || !strings.Contains(err.Error(), "pnpm-lock.yaml needs pnpm") {
		t.Fatalf("err = %v", err)
	}
}

// Dependencies without a lockfile are refused; a checkout with no
// package.json, or one declaring nothing, needs no install.
func TestSetupWithoutLockfile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"package.json": `{"devDependencies":{"jest":"30.5.2"}}`})
	if err := (Driver{}).Setup(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "no lockfile") {
		t.Fatalf("err = %v", err)
	}
	for _, files := range []map[string]string{{"a.js": ""}, {"package.json": `{"scripts":{"test":"node --test"}}`}} {
		dir := t.TempDir()
		write(t, dir, files)
		if m, err := (Driver{}).prepare(t.Context(), dir); err != nil || m != "" {
			t.Errorf("prepare = %q, %v; want nothing to install", m, err)
		}
	}
}

// Without a sandbox node_modules is linked into the checkout for the run,
// and the link removed after it.
func TestRunUnconfined(t *testing.T) {
	nodetest.Require(t)
	dir, _ := nodetest.History(t, nodetest.Words...)
	d := Driver{CacheDir: nodetest.CacheDir(t)}
	o, err := d.Run(t.Context(), dir, []string{nodetest.WordsTest}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Passed) != 1 || o.Passed[0] != nodetest.WordsTest {
		t.Fatalf("%s\n%s", o.Summary(), o.Output)
	}
	clean(t, dir)
}

// A lockfile that takes a package from a tarball outside the registry (a
// server the test holds, on loopback) is refused before npm runs: the
// setup's error names the package and the URL, and the server is never
// asked. With the check off, npm ci fetches it.
func TestSetupRefusesATarballOutsideTheRegistry(t *testing.T) {
	nodetest.Require(t)
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	tarball := srv.URL + "/evil/-/evil-1.0.0.tgz"
	dir, _ := nodetest.History(t, fmt.Sprintf(`evil: a dependency from a server of the repository's choosing

-- package.json --
{"name": "victim", "version": "1.0.0", "dependencies": {"evil": "1.0.0"}, "scripts": {"test": "node --test"}}
-- package-lock.json --
{
  "name": "victim",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {"name": "victim", "version": "1.0.0", "dependencies": {"evil": "1.0.0"}},
    "node_modules/evil": {
      "version": "1.0.0",
      "resolved": %q,
      "integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="
    }
  }
}
`, tarball))
	ctx := nodetest.Confined(t, "o/victim")
	err := Driver{}.Setup(ctx, dir)
	mu.Lock()
	got := slices.Clone(asked)
	mu.Unlock()
	if len(got) != 0 {
		t.Fatalf("the server a lockfile names was asked: %q (setup: %v)", got, err)
	}
	if err == nil {
		t.Fatal("a lockfile with a tarball outside the registry was installed")
	}
	t.Logf("the refused setup: %v", err)
	want := fmt.Sprintf("%q from %q: %s", "node_modules/evil", tarball, whyOutside)
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "package-lock.json takes packages from outside the registry") {
		t.Errorf("the error does not say %s: %v", want, err)
	}
	if ready, _ := filepath.Glob(filepath.Join(sandbox.CacheDir(ctx), "node", "*", readyFile)); len(ready) != 0 {
		t.Errorf("node_modules made for a refused lockfile: %q", ready)
	}
}
