package untrusted

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// hostileTree is a checkout as a test could leave it: links to a host file
// (by absolute path and by ".."), a link to a directory outside, a link on
// the way to a file, a FIFO, a sparse file far larger than any limit, and a
// binary file beside ordinary text.
func hostileTree(t *testing.T) (root, secret string) {
	t.Helper()
	outside := t.TempDir()
	secret = filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("SECRET-VALUE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root = t.TempDir()
	write := func(name, data string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", "package main\n")
	write("pkg/a.go", "package pkg\n")
	write("bin.dat", "ab\x00cd")
	link(secret, "abs-link")
	link("../"+filepath.Base(outside)+"/secret", "rel-link")
	link(outside, "dir-link")
	link("pkg", "pkg-link")
	link("main.go", "inner-link")
	link("/proc/self/environ", "environ")
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(root, "huge.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 29); err != nil { // 1.5 GiB, sparse
		t.Fatal(err)
	}
	f.Close()
	return root, secret
}

func TestReadFileRefusesWhatATestCouldPlant(t *testing.T) {
	root, _ := hostileTree(t)
	tr, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, c := range []struct {
		name string
		want error
	}{
		{"abs-link", ErrLink},
		{"rel-link", ErrLink},
		{"environ", ErrLink},
		{"inner-link", ErrLink}, // a link, even one that stays inside
		{"dir-link/secret", ErrLink},
		{"pkg-link/a.go", ErrLink},
		{"fifo", ErrNotRegular},
		{"pkg", ErrNotRegular},
		{"huge.go", ErrTooLarge},
		{"../secret", ErrOutside},
		{"/etc/passwd", ErrOutside},
		{"pkg/../../secret", ErrOutside},
	} {
		_, err := tr.ReadFile(c.name, 1<<20)
		if !errors.Is(err, c.want) {
			t.Errorf("ReadFile(%q) = %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := tr.ReadText("bin.dat", 1<<20); !errors.Is(err, ErrBinary) {
		t.Errorf("ReadText(bin.dat) = %v, want ErrBinary", err)
	}
	for _, name := range []string{"main.go", "pkg/a.go", "./pkg/a.go", "pkg//a.go"} {
		if data, err := tr.ReadFile(name, 1<<20); err != nil || len(data) == 0 {
			t.Errorf("ReadFile(%q) = %q, %v", name, data, err)
		}
	}
}

// The check is shown to matter: the same names read with the standard
// library reach the host's file.
func TestPlantedLinksReachTheHostWithoutTheTree(t *testing.T) {
	root, _ := hostileTree(t)
	for _, name := range []string{"abs-link", "rel-link", "dir-link/secret"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil || !strings.Contains(string(data), "SECRET-VALUE") {
			t.Fatalf("os.ReadFile(%s) = %q, %v: the hostile tree does not plant what it should", name, data, err)
		}
	}
}

// A sparse file of 1.5 GiB is refused from its size: nothing near its size
// is allocated.
func TestHugeFileIsRefusedBeforeItIsRead(t *testing.T) {
	root, _ := hostileTree(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ReadFile(root, "huge.go", 1<<20)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("refusing the file allocated %d bytes", grew)
	}
}

func TestReadDirAndLstatDoNotFollowLinks(t *testing.T) {
	root, _ := hostileTree(t)
	if _, err := ReadDir(root, "dir-link"); !errors.Is(err, ErrLink) {
		t.Errorf("ReadDir(dir-link) = %v, want ErrLink", err)
	}
	ents, err := ReadDir(root, ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if e.Name() == "abs-link" && e.Type()&fs.ModeSymlink == 0 {
			t.Errorf("abs-link listed as %v", e.Type())
		}
	}
	if got := strings.Join(names, " "); !strings.HasPrefix(got, "abs-link bin.dat dir-link environ fifo") {
		t.Errorf("entries not sorted: %s", got)
	}
	fi, err := Lstat(root, "abs-link")
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(abs-link) = %v, %v", fi, err)
	}
	if _, err := Lstat(root, "dir-link/secret"); !errors.Is(err, ErrLink) {
		t.Errorf("Lstat(dir-link/secret) = %v, want ErrLink", err)
	}
}

func TestWriteFileNeverWritesThroughALink(t *testing.T) {
	root, secret := hostileTree(t)
	tr, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, name := range []string{"abs-link", "rel-link", "dir-link/secret", "dir-link/new", "pkg-link/b.go", "fifo", "pkg", "../x"} {
		if err := tr.WriteFile(name, []byte("OVERWRITTEN"), 0o644); err == nil {
			t.Errorf("WriteFile(%q) succeeded", name)
		}
	}
	if data, _ := os.ReadFile(secret); string(data) != "SECRET-VALUE\n" {
		t.Fatalf("the host file was written: %q", data)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(secret), "new")); err == nil {
		t.Fatal("a file was created outside the tree")
	}
	if err := tr.WriteFile("new/dir/c.go", []byte("package dir\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteFile("main.go", []byte("package main // edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "main.go")); string(data) != "package main // edited\n" {
		t.Fatalf("main.go = %q", data)
	}
}
