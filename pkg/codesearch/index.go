package codesearch

import (
	"context"
	"os"
	"sync"
	"time"
)

// Index keeps, for each file of a tree searched before, a Bloom filter of
// the trigrams of its text (ASCII letters in lower case), so that a search
// reads only the files that may hold every substring a pattern needs. A
// filter never rejects a file that holds them: the answer is the answer of
// a search without the index, as long as each filter describes the file as
// it is now. Files are indexed by the first search that reads them; Update
// refreshes one file after an edit, and Verify makes the next search check
// every file's size and modification time against its filter's first (for
// after a command that may have written anywhere in the tree).
//
// The filter has between 4 and 8 bits for each distinct trigram of the
// file and one hash: about one bit in six is set, so a file without a
// query's text passes a five-trigram query about once in ten thousand.
type Index struct {
	dir string

	mu      sync.Mutex
	entries map[string]*entry
	verify  bool
}

// entry is what the index knows of one file.
type entry struct {
	// skip: the file is not searched (not regular, too large, binary).
	skip  bool
	size  int64
	mtime time.Time
	// bits is the Bloom filter; shift maps a 32-bit hash to a bit.
	bits  []uint64
	shift uint
}

// NewIndex is an empty index of the tree at dir.
func NewIndex(dir string) *Index {
	return &Index{dir: dir, entries: map[string]*entry{}}
}

// Search is the package's Search over the index's tree, reading only the
// files whose filters let a pattern through, and indexing those it has no
// filter for.
func (ix *Index) Search(ctx context.Context, files []string, patterns []Pattern, opt Options) ([]Hits, int, error) {
	return search(ctx, ix.dir, files, patterns, opt, ix)
}

// Update drops what the index knows of the file rel (relative to the tree,
// with forward slashes): the next search reads it again. For after an edit.
func (ix *Index) Update(rel string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	delete(ix.entries, rel)
}

// Verify makes the next search compare each indexed file's size and
// modification time with what was indexed, reading those that changed.
func (ix *Index) Verify() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.verify = true
}

// Len is the number of files indexed.
func (ix *Index) Len() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.entries)
}

// snapshot is the entries of files (nil where there is none), and whether
// they are to be verified; the verification is then owed no more.
func (ix *Index) snapshot(files []string) ([]*entry, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make([]*entry, len(files))
	for i, f := range files {
		out[i] = ix.entries[f]
	}
	verify := ix.verify
	ix.verify = false
	return out, verify
}

// store records the entries a search made; reverify asks the next search
// to verify again.
func (ix *Index) store(files []string, made []*entry, reverify bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.verify = ix.verify || reverify
	for i, e := range made {
		if e != nil {
			ix.entries[files[i]] = e
		}
	}
}

// current reports whether e still describes the file name beneath root.
func (e *entry) current(root *os.Root, name string) bool {
	st, err := root.Lstat(name)
	return err == nil && st.Mode().IsRegular() && st.Size() == e.size && st.ModTime().Equal(e.mtime)
}

// may reports whether the file may hold every trigram of grams.
func (e *entry) may(grams []uint32) bool {
	if e.skip {
		return false
	}
	for _, g := range grams {
		b := hashGram(g) >> e.shift
		if e.bits[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}

func hashGram(g uint32) uint32 { return g * 0x9E3779B1 }

// gramSet finds the distinct trigrams of lowered text; one per worker, its
// table cleared after each use.
type gramSet struct {
	seen []uint64 // 1<<24 bits
	list []uint32
}

func (gs *gramSet) distinct(lower []byte) []uint32 {
	if gs.seen == nil {
		gs.seen = make([]uint64, (1<<24)/64)
	}
	gs.list = gs.list[:0]
	for i := 0; i+3 <= len(lower); i++ {
		g := uint32(lower[i])<<16 | uint32(lower[i+1])<<8 | uint32(lower[i+2])
		if w, m := g/64, uint64(1)<<(g%64); gs.seen[w]&m == 0 {
			gs.seen[w] |= m
			gs.list = append(gs.list, g)
		}
	}
	for _, g := range gs.list {
		gs.seen[g/64] = 0
	}
	return gs.list
}

// newEntry is the filter of a file's lowered text.
func (gs *gramSet) newEntry(lower []byte, size int64, mtime time.Time) *entry {
	grams := gs.distinct(lower)
	// The smallest power of two of at least 4 bits a trigram, 64 at least.
	logBits := uint(6)
	for 1<<logBits < 4*len(grams) {
		logBits++
	}
	e := &entry{size: size, mtime: mtime, bits: make([]uint64, 1<<(logBits-6)), shift: 32 - logBits}
	for _, g := range grams {
		b := hashGram(g) >> e.shift
		e.bits[b/64] |= 1 << (b % 64)
	}
	return e
}

// trigrams are the distinct trigrams of the needs, ASCII-lowered: a file
// holding every need holds each of them in its lowered text.
func trigrams(needs [][]byte) []uint32 {
	var out []uint32
	seen := map[uint32]bool{}
	for _, n := range needs {
		l := appendLower(nil, n)
		for i := 0; i+3 <= len(l); i++ {
			g := uint32(l[i])<<16 | uint32(l[i+1])<<8 | uint32(l[i+2])
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}
