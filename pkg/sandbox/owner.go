package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// A root redfix's commands run as the sandbox's user (Config.UID), who
// owns nothing on the host: what such a command may write (its tree, its
// outbox, its scratch directory, the caches its setup fills) is given to
// that user before it runs, and a setup's caches are given back to
// redfix's user after it, so that no later command can change them even
// where a mount would let it. Ownership is changed beneath each
// directory's root, never through a link (os.Root, Lchown).

// own gives what is beneath dir to the sandbox's user, and lets it create
// and remove entries in dir itself; nothing when redfix is not root (its
// commands run as its own user). dir itself stays redfix's: git refuses
// a work tree whose top another user owns, and the checkout's own .git,
// when it has one, is shown read-only anyway.
func (b *Box) own(dir string) error {
	if b.setpriv == "" || dir == "" {
		return nil
	}
	if err := chownTree(dir, b.cfg.UID, b.cfg.GID); err != nil {
		return fmt.Errorf("sandbox: give %s to the sandbox's user: %w", dir, err)
	}
	// Only the sandbox's user reaches it: it sits in a directory of
	// redfix's (the data directory, a temporary directory of mode 0700).
	if err := os.Chmod(dir, 0o777); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sandbox: open %s to the sandbox's user: %w", dir, err)
	}
	return nil
}

// ownAll is own for each directory.
func (b *Box) ownAll(dirs ...string) error {
	for _, d := range dirs {
		if err := b.own(d); err != nil {
			return err
		}
	}
	return nil
}

// seal gives a setup's filled directories back to redfix's user.
func (b *Box) seal(dirs ...string) error {
	if b.setpriv == "" {
		return nil
	}
	for _, d := range dirs {
		if err := chownTree(d, os.Geteuid(), os.Getegid()); err != nil {
			return fmt.Errorf("sandbox: seal %s: %w", d, err)
		}
		if err := os.Chmod(d, 0o755); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sandbox: seal %s: %w", d, err)
		}
	}
	return nil
}

// chownTree gives everything beneath dir (not dir itself, nor a .git at
// its top) to uid:gid, changing only what another user owns, never
// following a link.
func chownTree(dir string, uid, gid int) error {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case p == ".":
			return nil
		case p == ".git":
			return fs.SkipDir
		}
		fi, err := root.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid && int(st.Gid) == gid {
			return nil
		}
		return root.Lchown(p, uid, gid)
	})
}
