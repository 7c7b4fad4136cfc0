package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// checkFills refuses a fill directory that would let a setup write caches
// not its own: one in the sandbox's cache directory (CacheDir) but outside
// the repository's cache for the run's trust (another repository's, the
// other trust's), or one that holds the cache directory itself. It is
// asked of the paths as named and again once they exist, links resolved,
// so that a link in a cache cannot lead a bind elsewhere.
func (b *Box) checkFills(cache string, fills []string, resolve bool) error {
	root := filepath.Clean(b.cfg.CacheDir)
	cache = filepath.Clean(cache)
	if resolve {
		var err error
		if root, err = filepath.EvalSymlinks(root); err != nil {
			return fmt.Errorf("sandbox: cache directory: %w", err)
		}
		if cache, err = filepath.EvalSymlinks(cache); err != nil {
			return fmt.Errorf("sandbox: the repository's cache: %w", err)
		}
	}
	for _, f := range fills {
		if !filepath.IsAbs(f) {
			return fmt.Errorf("sandbox: the fill directory %q is not absolute", f)
		}
		f = filepath.Clean(f)
		if resolve {
			r, err := filepath.EvalSymlinks(f)
			if err != nil {
				return fmt.Errorf("sandbox: fill directory: %w", err)
			}
			f = r
		}
		inRoot := f == root || beneath(f, root) || beneath(root, f)
		if inRoot && !beneath(f, cache) {
			return fmt.Errorf("sandbox: the fill directory %s is not in the repository's cache %s (for its trust)", f, cache)
		}
	}
	return nil
}

// beneath reports whether p lies strictly inside dir.
func beneath(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
