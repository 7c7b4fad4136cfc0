package sandbox

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A repository's new cache starts as a copy of the seed, which the box
// built from its own module: the repository's first build finds the
// standard library compiled. What a repository's command writes in its
// cache, rewriting every entry it was given, reaches neither the seed nor
// another repository's new cache.
func TestNewCacheStartsFromTheSeedAndCannotPoisonIt(t *testing.T) {
	b := confined(t, Config{}) // the user's seed, shared with every test that builds
	count := func(repo string) int {
		ctx := WithRepo(context.Background(), repo)
		res := sh(t, ctx, b, workspace(t), `find "$GOCACHE" -type f | wc -l`)
		n, err := strconv.Atoi(strings.TrimSpace(res.Output))
		if !res.OK() || err != nil {
			t.Fatalf("count the cache of %s: %+v", repo, res)
		}
		return n
	}
	if n := count("acme/first"); n < 100 {
		t.Fatalf("a new cache holds %d files: it did not start from the seed (%v)", n, b.seedErr)
	}
	// A repository's first go test compiles its own package only.
	mod := workspace(t)
	for name, body := range map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.21\n",
		"m_test.go": "package m\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\nfunc TestM(t *testing.T) { _ = fmt.Sprint(1) }\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := sh(t, WithRepo(context.Background(), "acme/compiles"), b, mod, `go test -x -count=1 ./... 2>&1`)
	if !res.OK() || strings.Contains(res.Output, " -p fmt ") || !strings.Contains(res.Output, " -p example.com/m ") {
		t.Fatalf("the first go test of a seeded cache compiled the standard library again (or failed):\n%s", tail(res.Output, 2000))
	}
	key, err := b.seedKey()
	if err != nil {
		t.Fatal(err)
	}
	seed := filepath.Join(b.cfg.SeedCache, key, "go-build")
	before := digest(t, seed)

	ctx := WithRepo(context.Background(), "acme/hostile")
	res = sh(t, ctx, b, workspace(t), `find "$GOCACHE" -type f | while read f; do echo poisoned > "$f"; done; echo planted > "$GOCACHE/planted"; echo done`)
	if !res.OK() || !strings.Contains(res.Output, "done") {
		t.Fatalf("poison: %+v", res)
	}
	if after := digest(t, seed); after != before {
		t.Fatal("a repository's command changed the seed")
	}
	ctx = WithRepo(context.Background(), "acme/next")
	res = sh(t, ctx, b, workspace(t), `grep -rl poisoned "$GOCACHE" | head -1; ls "$GOCACHE/planted" 2>/dev/null; echo checked`)
	if strings.TrimSpace(res.Output) != "checked" {
		t.Fatalf("the next repository's cache holds what another wrote:\n%s", res.Output)
	}

	off := confined(t, Config{SeedCache: SeedOff})
	res = sh(t, WithRepo(context.Background(), "acme/plain"), off, workspace(t), `find "$GOCACHE" -type f | wc -l`)
	if strings.TrimSpace(res.Output) != "0" {
		t.Fatalf("with the seed off a new cache holds %s files", res.Output)
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
