package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// A data directory is made private (0700), an open one of this user's is
// closed, and one that is not this user's own is refused.
func TestPrepareDataDir(t *testing.T) {
	base := t.TempDir()

	made := filepath.Join(base, "new", "redfix")
	if fixed, err := PrepareDataDir(made); err != nil || fixed {
		t.Fatalf("a missing directory: fixed %v, %v", fixed, err)
	}
	if p := perm(t, made); p != 0o700 {
		t.Errorf("made with mode %v, want 0700", p)
	}
	if fixed, err := PrepareDataDir(made); err != nil || fixed {
		t.Errorf("a private one again: fixed %v, %v; want left alone", fixed, err)
	}

	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if fixed, err := PrepareDataDir(open); err != nil || !fixed {
		t.Fatalf("a world-readable one: fixed %v, %v; want it closed", fixed, err)
	}
	if p := perm(t, open); p != 0o700 {
		t.Errorf("after closing: mode %v, want 0700", p)
	}

	link := filepath.Join(base, "link")
	if err := os.Symlink(made, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for what, path := range map[string]string{"a symbolic link": link, "a file": file} {
		if _, err := PrepareDataDir(path); !errors.Is(err, ErrDataDirUnsafe) {
			t.Errorf("%s: %v, want ErrDataDirUnsafe", what, err)
		}
	}

	if os.Getuid() != 0 {
		t.Log("not root: another user's directory cannot be made here; not checked")
		return
	}
	theirs := filepath.Join(base, "theirs")
	if err := os.Mkdir(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := PrepareDataDir(theirs); !errors.Is(err, ErrDataDirUnsafe) {
		t.Errorf("another user's directory: %v, want ErrDataDirUnsafe", err)
	}
	if p := perm(t, theirs); p != 0o755 {
		t.Errorf("another user's directory changed to %v", p)
	}
}

// The default data directory is the user's own (the user cache directory),
// not one every user of the machine shares.
func TestDefaultDataDirIsTheUsers(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	if got := Default().DataDir; got != filepath.Join(cache, "redfix") {
		t.Errorf("default data directory %s, want %s", got, filepath.Join(cache, "redfix"))
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	if got := Default().DataDir; got == filepath.Join(os.TempDir(), "redfix") || filepath.Dir(got) != os.TempDir() {
		t.Errorf("without a home: %s, want a directory of the user's in %s", got, os.TempDir())
	}
}
