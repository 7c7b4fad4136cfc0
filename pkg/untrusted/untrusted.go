// Package untrusted reads and writes files of a tree that a repository's
// code may have written: a checkout after its tests ran. Every path is
// opened beneath the tree's root and never through a symbolic link (not the
// last component, not a directory on the way), a file is sized before it is
// read and refused over the caller's limit, and only regular files are
// opened (a FIFO would block the reader, a device would read forever).
//
// The rule it serves: after any command has run in a checkout, every file in
// it is hostile input. A link planted by a test must not take redfix to a
// file outside the checkout (its configuration, its data directory,
// /proc/self/environ), however the path was named.
package untrusted

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Errors a read or a write is refused with; each is wrapped with the path.
var (
	// ErrLink is a path that is, or passes through, a symbolic link.
	ErrLink = errors.New("is a symbolic link")
	// ErrNotRegular is a path that is not a regular file (a directory, a
	// FIFO, a device, a socket).
	ErrNotRegular = errors.New("is not a regular file")
	// ErrTooLarge is a file over the caller's limit.
	ErrTooLarge = errors.New("is larger than the limit")
	// ErrBinary is a file that holds a NUL byte where text is wanted.
	ErrBinary = errors.New("is a binary file")
	// ErrOutside is a path that leaves the tree ("..", an absolute path).
	ErrOutside = errors.New("is outside the tree")
)

// Tree is a directory whose contents are not trusted. It holds the root open
// until Close.
type Tree struct {
	dir  string
	root *os.Root
}

// Open opens the tree rooted at dir. dir itself is trusted: redfix made it.
func Open(dir string) (*Tree, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open tree %s: %w", dir, err)
	}
	return &Tree{dir: dir, root: r}, nil
}

// Dir is the tree's root.
func (t *Tree) Dir() string { return t.dir }

// Close releases the tree's root.
func (t *Tree) Close() error { return t.root.Close() }

// clean turns name (slash or OS separated, relative to the root) into the
// form os.Root takes, refusing a name that leaves the tree.
func clean(name string) (string, error) {
	n := filepath.ToSlash(name)
	if n == "" {
		n = "."
	}
	if path.IsAbs(n) || filepath.IsAbs(name) {
		return "", fmt.Errorf("%s %w", name, ErrOutside)
	}
	n = path.Clean(n)
	if n == ".." || strings.HasPrefix(n, "../") {
		return "", fmt.Errorf("%s %w", name, ErrOutside)
	}
	return n, nil
}

// Lstat describes name without following a link, after checking that no
// directory on its way is a link.
func (t *Tree) Lstat(name string) (fs.FileInfo, error) {
	if Trusting {
		return os.Stat(filepath.Join(t.dir, name))
	}
	n, err := clean(name)
	if err != nil {
		return nil, err
	}
	if err := t.noLinkOnTheWay(n); err != nil {
		return nil, err
	}
	return t.root.Lstat(n)
}

// noLinkOnTheWay refuses a name any of whose parent directories is a link.
func (t *Tree) noLinkOnTheWay(n string) error {
	if n == "." {
		return nil
	}
	dirs := strings.Split(n, "/")
	for i := 1; i < len(dirs); i++ {
		p := strings.Join(dirs[:i], "/")
		fi, err := t.root.Lstat(p)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: %s %w", n, p, ErrLink)
		}
	}
	return nil
}

// openRegular opens name for reading: a regular file reached through no
// link. The file's identity is checked again once it is open, so that a
// swap between the look and the open is caught.
func (t *Tree) openRegular(name string) (*os.File, fs.FileInfo, error) {
	n, err := clean(name)
	if err != nil {
		return nil, nil, err
	}
	fi, err := t.Lstat(n)
	if err != nil {
		return nil, nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, nil, fmt.Errorf("%s %w", n, ErrLink)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s %w", n, ErrNotRegular)
	}
	// O_NONBLOCK: a FIFO swapped in after the look must not block us.
	f, err := t.root.OpenFile(n, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	got, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !got.Mode().IsRegular() || !os.SameFile(fi, got) {
		f.Close()
		return nil, nil, fmt.Errorf("%s changed while it was opened: %w", n, ErrNotRegular)
	}
	return f, got, nil
}

// ReadFile reads name whole, refusing it when it is larger than max bytes
// (max <= 0: no limit). The size is checked before anything is read, and
// the read stops at max+1 bytes whatever the file grows to meanwhile.
func (t *Tree) ReadFile(name string, max int64) ([]byte, error) {
	if Trusting {
		return os.ReadFile(filepath.Join(t.dir, name))
	}
	f, fi, err := t.openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if max > 0 && fi.Size() > max {
		return nil, fmt.Errorf("%s (%d bytes) %w of %d bytes", name, fi.Size(), ErrTooLarge, max)
	}
	var r io.Reader = f
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if max > 0 && int64(len(data)) > max {
		return nil, fmt.Errorf("%s %w of %d bytes", name, ErrTooLarge, max)
	}
	return data, nil
}

// BinarySniff is how much of a file's start is looked at for a NUL byte.
const BinarySniff = 8000

// ReadText is ReadFile for a text file: one with a NUL byte in its first
// BinarySniff bytes is refused with ErrBinary.
func (t *Tree) ReadText(name string, max int64) (string, error) {
	data, err := t.ReadFile(name, max)
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(data[:min(len(data), BinarySniff)], 0) >= 0 {
		return "", fmt.Errorf("%s %w", name, ErrBinary)
	}
	return string(data), nil
}

// ReadDir lists the directory name (reached through no link), sorted by
// name. Entries are described as they are (a link is a link).
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	if Trusting {
		return os.ReadDir(filepath.Join(t.dir, name))
	}
	n, err := clean(name)
	if err != nil {
		return nil, err
	}
	fi, err := t.Lstat(n)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s %w", n, ErrLink)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", n)
	}
	f, err := t.root.OpenFile(n, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", n, err)
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, nil
}

// WriteFile writes data to name, creating it (and its directories) or
// replacing a regular file's contents. It refuses to write through a link
// or over anything but a regular file.
func (t *Tree) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if Trusting {
		p := filepath.Join(t.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, perm)
	}
	n, err := clean(name)
	if err != nil {
		return err
	}
	if n == "." {
		return fmt.Errorf("%s %w", name, ErrNotRegular)
	}
	if dir := path.Dir(n); dir != "." {
		if err := t.noLinkOnTheWay(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := t.root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("make the directory of %s: %w", n, err)
		}
		// Made now, or there before: still no link on the way.
		if err := t.noLinkOnTheWay(n); err != nil {
			return err
		}
	}
	fi, err := t.root.Lstat(n)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s %w", n, ErrLink)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s %w", n, ErrNotRegular)
	}
	f, err := t.root.OpenFile(n, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", n, err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("write %s: %w", n, ErrNotRegular)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", n, err)
	}
	return f.Close()
}

// ReadFile opens the tree at dir for one read of name: Tree.ReadFile.
func ReadFile(dir, name string, max int64) ([]byte, error) {
	t, err := Open(dir)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.ReadFile(name, max)
}

// ReadText opens the tree at dir for one read of name: Tree.ReadText.
func ReadText(dir, name string, max int64) (string, error) {
	t, err := Open(dir)
	if err != nil {
		return "", err
	}
	defer t.Close()
	return t.ReadText(name, max)
}

// ReadDir opens the tree at dir for one listing of name: Tree.ReadDir.
func ReadDir(dir, name string) ([]fs.DirEntry, error) {
	t, err := Open(dir)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.ReadDir(name)
}

// Lstat opens the tree at dir to describe name: Tree.Lstat.
func Lstat(dir, name string) (fs.FileInfo, error) {
	t, err := Open(dir)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.Lstat(name)
}

// Rel is name relative to dir when name is an absolute path inside it
// (lexically), and name itself otherwise: callers that hold absolute paths
// into a tree pass them through Rel first.
func Rel(dir, name string) string {
	if !filepath.IsAbs(name) {
		return name
	}
	r, err := filepath.Rel(dir, name)
	if err != nil {
		return name
	}
	return r
}

// WriteFile opens the tree at dir for one write of name: Tree.WriteFile.
func WriteFile(dir, name string, data []byte, perm fs.FileMode) error {
	t, err := Open(dir)
	if err != nil {
		return err
	}
	defer t.Close()
	return t.WriteFile(name, data, perm)
}
