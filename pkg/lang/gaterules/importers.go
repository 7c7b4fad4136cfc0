package gaterules

import "sort"

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
