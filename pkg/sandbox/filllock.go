package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"
)

// lockFills takes an exclusive lock for each directory a setup fills (a
// file beside it, in redfix's cache directory), in one order so that
// setups filling several wait for each other without deadlock, waiting as
// long as ctx lets; unlock releases them.
func lockFills(ctx context.Context, dirs []string) (unlock func(), err error) {
	names := slices.Clone(dirs)
	slices.Sort(names)
	names = slices.Compact(names)
	var held []*os.File
	unlock = func() {
		for i := len(held) - 1; i >= 0; i-- {
			_ = syscall.Flock(int(held[i].Fd()), syscall.LOCK_UN)
			held[i].Close()
		}
	}
	for _, d := range names {
		f, err := lockFile(ctx, d+".fill-lock")
		if err != nil {
			unlock()
			return nil, fmt.Errorf("sandbox: lock the fill directory %s: %w", d, err)
		}
		held = append(held, f)
	}
	return unlock, nil
}

// lockFile opens name and takes an exclusive lock on it, polling while
// another process holds it, until ctx ends.
func lockFile(ctx context.Context, name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}
