package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// prefix names the directories Open makes.
const prefix = "redfix-ws-"

// lockName is the file in a workspace's directory whose lock its owner
// holds while it lives. The kernel releases the lock when the owner dies,
// however it dies, so a workspace whose lock can be taken is abandoned.
const lockName = ".lock"

// unlockedGrace is how long a directory without a lock file is left alone:
// its owner may be between making it and locking it.
const unlockedGrace = time.Minute

func hold(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return f, nil
}

// Sweep removes the workspaces under parent that no live process holds:
// those left behind by a worker or a bot that was killed. Workspaces in use,
// by this process or another sharing the directory, are left alone. It
// returns the directories it removed.
func Sweep(parent string) ([]string, error) {
	ents, err := os.ReadDir(parent)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweep workspaces in %s: %w", parent, err)
	}
	var removed []string
	var errs []error
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			if fi, err := os.Stat(dir); err != nil || time.Since(fi.ModTime()) < unlockedGrace {
				continue
			}
		} else if err != nil {
			errs = append(errs, err)
			continue
		} else {
			busy := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
			if busy {
				f.Close()
				continue
			}
			// Held until removed, so that no one reuses it meanwhile.
			defer f.Close()
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}
