// Package codeindex indexes the declarations of a source tree — types,
// functions and methods — through a language's parser (Parser, which each
// language driver gives: BuildWith), so that the agent can find a symbol
// by name. The index follows edits cheaply: Refresh re-parses only the files
// whose size or modification time changed.
package codeindex

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kinds of symbols.
const (
	KindStruct    = "struct"
	KindInterface = "interface"
	KindType      = "type" // any other named type, aliases included
	KindFunc      = "func"
	KindMethod    = "method"
)

// Symbol is one declaration.
type Symbol struct {
	Name string `json:"name"`
	// Receiver is a method's receiver type, without '*' or type parameters.
	Receiver string `json:"receiver,omitempty"`
	Kind     string `json:"kind"`
	// File is relative to the indexed directory, with forward slashes.
	File    string `json:"file"`
	Line    int    `json:"line"`
	EndLine int    `json:"end_line"`
	// Signature is the declaration's first part as written: "func (p *P)
	// Parse(s string) error", "type Parser struct".
	Signature string `json:"signature"`
}

// QualifiedName is Receiver.Name for methods and Name otherwise.
func (s Symbol) QualifiedName() string {
	if s.Receiver != "" {
		return s.Receiver + "." + s.Name
	}
	return s.Name
}

// Location is file:line.
func (s Symbol) Location() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

type fileEntry struct {
	size    int64
	mod     time.Time
	symbols []Symbol
}

// Index holds the symbols of the source files under a directory. It is safe for
// concurrent use. Lookups by name go through two maps, from a lower-cased
// name and a lower-cased receiver type to the files declaring them, so that
// a search reads only the files that can answer it.
type Index struct {
	dir    string
	parser Parser
	mu     sync.RWMutex
	files  map[string]*fileEntry // by relative path
	names  map[string]map[string]struct{}
	recvs  map[string]map[string]struct{}
	// gen counts the changes to the set of names; list is the names as
	// one text, made again when gen moved past it.
	gen    uint64
	listMu sync.Mutex
	list   *nameList
}

// nameList is the index's lower-cased names joined by newlines, so that the
// names holding a query are found by one substring scan.
type nameList struct {
	gen    uint64
	text   string
	starts []int
	keys   []string
}

// Parser is what an index needs of a language: which files and directories
// it reads, and the declarations of a file, from a real parser. A file that
// does not parse is indexed as far as the parser got.
type Parser struct {
	// Source reports a file (slash path relative to the root) to index.
	Source func(rel string) bool
	// SkipDir reports a directory (its name) whose files are not indexed.
	SkipDir func(name string) bool
	// Parse returns the declarations of the file rel, whose text is src.
	Parse func(rel string, src []byte) []Symbol
	// IsTest reports a file of tests: its declarations rank after the
	// code's.
	IsTest func(rel string) bool
}

// BuildWith indexes the files under dir that p reads.
func BuildWith(dir string, p Parser) (*Index, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", dir, err)
	}
	ix := &Index{dir: abs, parser: p, files: map[string]*fileEntry{}, names: map[string]map[string]struct{}{}, recvs: map[string]map[string]struct{}{}}
	if err := ix.Refresh(); err != nil {
		return nil, err
	}
	return ix, nil
}

// Dir is the indexed directory.
func (ix *Index) Dir() string { return ix.dir }

// Refresh brings the index up to date with the tree: new and changed files
// are parsed, removed ones dropped. Unchanged files cost one stat.
func (ix *Index) Refresh() error {
	seen := map[string]bool{}
	var changed []string
	stats := map[string]fs.FileInfo{}
	err := filepath.WalkDir(ix.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == ix.dir {
				return err
			}
			return nil // an unreadable corner does not spoil the rest
		}
		name := d.Name()
		if d.IsDir() {
			if path != ix.dir && ix.parser.SkipDir(name) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(ix.dir, path)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() || !ix.parser.Source(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		seen[rel] = true
		ix.mu.RLock()
		e := ix.files[rel]
		ix.mu.RUnlock()
		if e == nil || e.size != info.Size() || !e.mod.Equal(info.ModTime()) {
			changed = append(changed, rel)
			stats[rel] = info
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index %s: %w", ix.dir, err)
	}
	// The files are parsed side by side, one worker a CPU.
	entries := make([]*fileEntry, len(changed))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := min(runtime.GOMAXPROCS(0), len(changed)); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(changed) {
					return
				}
				syms, err := ix.parse(changed[i])
				if err != nil {
					continue // vanished between the walk and the read
				}
				info := stats[changed[i]]
				entries[i] = &fileEntry{size: info.Size(), mod: info.ModTime(), symbols: syms}
			}
		}()
	}
	wg.Wait()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for rel := range ix.files {
		if !seen[rel] {
			ix.setLocked(rel, nil)
		}
	}
	for i, e := range entries {
		if e != nil {
			ix.setLocked(changed[i], e)
		}
	}
	return nil
}

// setLocked puts e as the entry of rel (nil drops it), keeping the name
// maps in step. ix.mu is held for writing.
func (ix *Index) setLocked(rel string, e *fileEntry) {
	if old := ix.files[rel]; old != nil {
		for _, s := range old.symbols {
			if unlink(ix.names, strings.ToLower(s.Name), rel) {
				ix.gen++
			}
			if s.Receiver != "" {
				unlink(ix.recvs, strings.ToLower(s.Receiver), rel)
			}
		}
	}
	if e == nil {
		delete(ix.files, rel)
		return
	}
	ix.files[rel] = e
	for _, s := range e.symbols {
		if link(ix.names, strings.ToLower(s.Name), rel) {
			ix.gen++
		}
		if s.Receiver != "" {
			link(ix.recvs, strings.ToLower(s.Receiver), rel)
		}
	}
}

func link(m map[string]map[string]struct{}, key, rel string) bool {
	set := m[key]
	created := set == nil
	if created {
		set = map[string]struct{}{}
		m[key] = set
	}
	set[rel] = struct{}{}
	return created
}

func unlink(m map[string]map[string]struct{}, key, rel string) bool {
	if set := m[key]; set != nil {
		delete(set, rel)
		if len(set) == 0 {
			delete(m, key)
			return true
		}
	}
	return false
}

// Reload re-parses one file (relative to the indexed directory), or drops it
// when it no longer exists.
func (ix *Index) Reload(rel string) error {
	rel = filepath.ToSlash(filepath.Clean(rel))
	info, err := os.Stat(filepath.Join(ix.dir, filepath.FromSlash(rel)))
	if err != nil {
		if os.IsNotExist(err) {
			ix.mu.Lock()
			ix.setLocked(rel, nil)
			ix.mu.Unlock()
			return nil
		}
		return fmt.Errorf("reindex %s: %w", rel, err)
	}
	syms, err := ix.parse(rel)
	if err != nil {
		return fmt.Errorf("reindex %s: %w", rel, err)
	}
	ix.mu.Lock()
	ix.setLocked(rel, &fileEntry{size: info.Size(), mod: info.ModTime(), symbols: syms})
	ix.mu.Unlock()
	return nil
}

func (ix *Index) isTest(rel string) bool { return ix.parser.IsTest != nil && ix.parser.IsTest(rel) }

// maxLike bounds the names Similar reads the symbols of: the ones closest
// in length to the query are kept.
const maxLike = 400
