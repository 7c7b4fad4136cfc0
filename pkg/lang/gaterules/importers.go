package gaterules

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/redfix/redfix/pkg/untrusted"
)

// Dependent is a test file (a package of tests) that imports a changed
// file, directly or through others.
type Dependent struct {
	Dir string // the test file or package
	// Via is the changed file it reaches, and Hops how many imports away
	// (1: it imports the changed file itself).
	Via  string
	Hops int
}

// NearestImporters walks an import graph (importers: a file -> the files
// importing it) from the changed files outward: the files keep holds, with
// how many imports away and which changed file reached them, nearest
// first, then by path.
func NearestImporters(importers map[string][]string, changed []string, keep func(string) bool) []Dependent {
	type reach struct {
		via  string
		hops int
	}
	seen := map[string]reach{}
	var frontier []string
	for _, f := range changed {
		seen[f] = reach{f, 0}
		frontier = append(frontier, f)
	}
	var out []Dependent
	for hops := 1; len(frontier) > 0; hops++ {
		var next []string
		for _, f := range frontier {
			for _, imp := range importers[f] {
				if _, ok := seen[imp]; ok {
					continue
				}
				seen[imp] = reach{seen[f].via, hops}
				next = append(next, imp)
			}
		}
		sort.Strings(next)
		for _, f := range next {
			if keep(f) {
				out = append(out, Dependent{Dir: f, Via: seen[f].via, Hops: hops})
			}
		}
		frontier = next
	}
	return out
}

// Dirs are the dependents' packages, in order.
func Dirs(deps []Dependent) []string {
	out := make([]string, 0, len(deps))
	for _, d := range deps {
		out = append(out, d.Dir)
	}
	return out
}

// MaxModules bounds the files an import graph reads.
const MaxModules = 20_000

// Modules lists the files of the checkout at dir that keep holds (by
// name), outside the directories skipDir names, at most MaxModules, as
// slash paths relative to dir: the modules an import graph reads.
func Modules(dir string, skipDir, keep func(name string) bool) ([]string, error) {
	var rels []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && p == dir:
			return err
		case err != nil:
			return nil
		case d.IsDir() && p != dir && skipDir(d.Name()):
			return filepath.SkipDir
		case d.IsDir() || !d.Type().IsRegular() || !keep(d.Name()):
			return nil
		case len(rels) >= MaxModules:
			return filepath.SkipAll
		}
		rels = append(rels, untrusted.Rel(dir, p))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the modules of %s: %w", dir, err)
	}
	return rels, nil
}
