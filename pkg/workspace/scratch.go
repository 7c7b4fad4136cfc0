package workspace

import (
	"fmt"
	"os"
)

// Scratch is a directory of this process's under a workspaces' parent, for
// work beside a workspace (more work trees of it, for example): held like a
// workspace while it lives, so that Sweep reclaims it once its owner died,
// and removed by Close.
type Scratch struct {
	Dir  string
	lock *os.File
}

// NewScratch makes a scratch directory under parent ("" for the system's
// temporary directory).
func NewScratch(parent string) (*Scratch, error) {
	if parent != "" {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("scratch directory: %w", err)
		}
	}
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	lock, err := hold(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &Scratch{Dir: dir, lock: lock}, nil
}

// Close removes the directory and everything in it.
func (s *Scratch) Close() error {
	err := os.RemoveAll(s.Dir)
	_ = s.lock.Close() // after the removal: Sweep must not race it
	return err
}
