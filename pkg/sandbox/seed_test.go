package sandbox

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every confined go command reads the seed, which the box built from its
// own module: a repository's first build finds the standard library
// compiled. What a command writes, trying every layer of its build cache
// and every entry in them, reaches neither the seed nor the repository's
// own cache, and the next command of the same repository sees none of it.
func TestBuildsReadTheSeedAndCannotPoisonIt(t *testing.T) {
	b := confined(t, Config{}) // the user's seed, shared with every test that builds
	mod := workspace(t)
	for name, body := range map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.21\n",
		"m_test.go": "package m\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\nfunc TestM(t *testing.T) { _ = fmt.Sprint(1) }\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gotest := func(repo string, bx *Box) Result {
		return sh(t, WithTree(WithRepo(context.Background(), repo), mod), bx, mod, `out=$(go test -x -count=1 ./... 2>&1) || { echo "$out" | tail -50; exit 1; }; echo "$out" | grep -oE ' -p (fmt|example.com/m) ' | sort -u`)
	}
	res := gotest("acme/compiles", b)
	if !res.OK() || strings.Contains(res.Output, " -p fmt ") || !strings.Contains(res.Output, " -p example.com/m ") {
		t.Fatalf("the first go test of a repository compiled the standard library again (or failed): %v\n%s", b.seedErr, tail(res.Output, 2000))
	}
	key, err := b.seedKey()
	if err != nil {
		t.Fatal(err)
	}
	seed := filepath.Join(b.cfg.SeedCache, key, "go-build")
	own := filepath.Join(b.cacheFor("acme/hostile", false), "go-build")
	if err := os.MkdirAll(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, "entry"), []byte("the setup's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, beforeOwn := digest(t, seed), digest(t, own)

	ctx := WithRepo(context.Background(), "acme/hostile")
	res = sh(t, ctx, b, workspace(t), `
for d in $(echo "$`+goCacheReadEnv+`:$`+goCacheWriteEnv+`:$GOCACHE" | tr : ' '); do
  find "$d" -type f 2>/dev/null | while read f; do echo poisoned > "$f" 2>/dev/null && echo "WROTE $f"; done
  mkdir -p "$d/00" 2>/dev/null; echo planted > "$d/00/planted" 2>/dev/null && echo "PLANTED $d"
done
echo done`)
	if !res.OK() || !strings.Contains(res.Output, "done") {
		t.Fatalf("poison: %+v", res)
	}
	if after := digest(t, seed); after != before {
		t.Fatalf("a repository's command changed the seed:\n%s", tail(res.Output, 2000))
	}
	if after := digest(t, own); after != beforeOwn {
		t.Fatalf("a repository's command changed its own build cache:\n%s", tail(res.Output, 2000))
	}
	// The next command looks where the last one wrote (every cache
	// directory it is given, its home and /tmp), not the whole file
	// system: a walk of / took more than the command's minute on a loaded
	// machine.
	res = sh(t, ctx, b, workspace(t), `dirs=$(echo "$`+goCacheReadEnv+`:$`+goCacheWriteEnv+`:$GOCACHE" | tr : ' ')
grep -rl poisoned $dirs 2>/dev/null | head -1; find $dirs "$HOME" /tmp -name planted 2>/dev/null | head -1; echo checked`)
	if !res.OK() || strings.TrimSpace(res.Output) != "checked" {
		t.Fatalf("the repository's next command sees what the last one wrote (or did not finish: %+v):\n%s", res, res.Output)
	}

	// With the seed off a repository's cache starts empty: its build
	// compiles the standard library package it imports. One package with
	// no imports of its own (go build, no test binary) shows it; go test
	// would compile all of testing's, a minute on a loaded 2-core machine.
	off := confined(t, Config{SeedCache: SeedOff})
	plain := workspace(t)
	for name, body := range map[string]string{
		"go.mod": "module example.com/p\n\ngo 1.21\n",
		"p.go":   "package p\n\nimport \"unicode/utf8\"\n\n// N is a rune's length.\nvar N = utf8.RuneLen('x')\n",
	} {
		if err := os.WriteFile(filepath.Join(plain, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res = sh(t, WithTree(WithRepo(context.Background(), "acme/plain"), plain), off, plain, `out=$(go build -x ./... 2>&1) || { echo "$out" | tail -50; exit 1; }; echo "$out" | grep -oE ' -p (unicode/utf8|example.com/p) ' | sort -u`)
	if !res.OK() || !strings.Contains(res.Output, " -p unicode/utf8 ") || !strings.Contains(res.Output, " -p example.com/p ") {
		t.Fatalf("with the seed off a repository's build found unicode/utf8 compiled (or failed):\n%s", tail(res.Output, 2000))
	}
}

// digest is a hash of every file's name and content under dir.
func digest(t *testing.T, dir string) [32]byte {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h.Write([]byte(p))
		h.Write(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// The seed is read wherever it lies on the host: beneath a directory the
// sandbox's user cannot enter (a root redfix's user cache directory outside
// $HOME and /tmp, 0700), it is shown at a path of the sandbox's own. Before,
// it was shown at its own path, unreachable, and every build compiled the
// standard library again, silently. (A redfix that is not root runs its
// commands as itself: this passes either way there.)
func TestTheSeedIsReadBeneathAClosedDirectory(t *testing.T) {
	closed, err := os.MkdirTemp("/var/tmp", "redfix-closed-")
	if err != nil {
		t.Fatalf("a directory outside /tmp and $HOME: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(closed) })
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	b := confined(t, Config{SeedCache: filepath.Join(closed, "seed")})
	key, err := b.seedKey()
	if err != nil {
		t.Fatal(err)
	}
	// A seed made already: its entries and its completion mark.
	build := filepath.Join(b.cfg.SeedCache, key, "go-build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(build, "entry"), []byte("seeded\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.cfg.SeedCache, key, "complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := sh(t, WithRepo(context.Background(), "acme/seeded"), b, workspace(t),
		`for d in $(echo "$`+goCacheReadEnv+`" | tr : ' '); do cat "$d/entry" 2>/dev/null; done; echo done`)
	if !res.OK() || !strings.Contains(res.Output, "seeded") {
		t.Fatalf("the seed is not readable in the sandbox:\n%s", res.Output)
	}
}
