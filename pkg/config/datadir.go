package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// defaultDataDir is the user's own: the user cache directory's redfix
// ($XDG_CACHE_HOME/redfix, ~/.cache/redfix), or, without a home, a
// directory of the system's temporary one named for the user. Never one
// directory that every user of the machine shares.
func defaultDataDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "redfix")
	}
	return filepath.Join(os.TempDir(), "redfix-"+strconv.Itoa(os.Getuid()))
}

// ErrDataDirUnsafe is returned for a data directory others could read or
// write into: not a directory of its own (a link, a file), or another
// user's.
var ErrDataDirUnsafe = errors.New("data directory is not private to this user")

// PrepareDataDir makes dir a directory only its owner can use (mode 0700).
// A missing one is made with that mode (and its missing parents). One of
// this user's that group or others may read or enter is closed to them
// (fixed reports it). One that is a symbolic link, not a directory, or
// another user's is refused with ErrDataDirUnsafe: what is in it may have
// been read or planted by someone else.
func PrepareDataDir(dir string) (fixed bool, err error) {
	if dir == "" {
		return false, errors.New("prepare data directory: no path")
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("make data directory %s: %w", dir, err)
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return false, fmt.Errorf("check data directory %s: %w", dir, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return false, fmt.Errorf("%w: %s is a symbolic link; name the directory itself", ErrDataDirUnsafe, dir)
	case !fi.IsDir():
		return false, fmt.Errorf("%w: %s is not a directory", ErrDataDirUnsafe, dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return false, fmt.Errorf("%w: %s belongs to user %d, not to this user (%d); set data_dir (REDFIX_DATA_DIR) to a directory of your own", ErrDataDirUnsafe, dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return false, nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return false, fmt.Errorf("close data directory %s to other users (mode %v): %w", dir, fi.Mode().Perm(), err)
	}
	return true, nil
}
