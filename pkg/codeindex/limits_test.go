package codeindex_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/lang/golang"
)

// A checkout's tests can leave a huge Go file or a link to a host file: the
// index reads neither (the huge one is refused from its size, before any
// of it is read).
func TestIndexSkipsHugeFilesAndLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc Real() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "huge.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(19 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	host := filepath.Join(t.TempDir(), "host.go")
	if err := os.WriteFile(host, []byte("package host\n\nfunc HostSecret() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix, err := codeindex.BuildWith(dir, golang.IndexParser)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("indexing allocated %d bytes: the huge file was read", grew)
	}
	if len(ix.FindFuncs("Real")) != 1 {
		t.Errorf("Real not indexed")
	}
	if got := ix.FindFuncs("HostSecret"); len(got) != 0 {
		t.Errorf("a linked host file was indexed: %v", got)
	}
	if err := ix.Reload("huge.go"); err != nil && !strings.Contains(err.Error(), "huge") {
		t.Errorf("reload: %v", err)
	}
}
