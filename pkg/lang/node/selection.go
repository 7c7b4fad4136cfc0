package node

import (
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/testrun"
)

// A test's canonical name joins its describe blocks' titles and its own
// (and, for a node:test subtest, its parent tests') with " > ", as vitest
// names it; a title may hold " > " itself ("parses a > b"). The name alone
// does not say where one title ends: what a file declares with literal
// names does (titlesOf), and where it says nothing, the runner is asked for
// every way the name could be split (selection), and what else that runs
// is left out when the report is read, which names each test by its
// titles.

// titlesOf are the titles of the tests the checkout's files declare with
// literal names, by id: a test's describe blocks and its own title.
func titlesOf(r *resolver) map[string][]string {
	tests, err := r.declaredAll()
	if err != nil {
		return nil
	}
	out := make(map[string][]string, len(tests))
	for _, ft := range tests {
		id := ft.file + "::" + ft.t.name()
		if _, ok := out[id]; !ok {
			out[id] = ft.t.names
		}
	}
	return out
}

// selection is what targets ask the runner to run: the files and
// directories, and a name pattern when they name tests (empty when a whole
// file or directory is asked, which runs everything of it anyway). titles
// are the targets' titles where their files declare them (titlesOf).
//
// jest, vitest and mocha match a pattern against a test's describe blocks
// and title joined by spaces; node:test against each test's own title, and
// runs a test's subtests only when the test itself matches. The pattern is
// anchored and escaped: it asks for those names exactly (a describe
// block's name asks for its tests). What else it matches (one name joined
// differently) is run, and left out when the report is read.
func selection(runner string, targets []testrun.Target, titles map[string][]string) (paths []string, pattern string) {
	seen := map[string]bool{}
	var names []string
	whole := false
	for _, t := range targets {
		if !seen[t.ImportPath] {
			seen[t.ImportPath] = true
			paths = append(paths, t.ImportPath)
		}
		if t.IsPackage() {
			whole = true
			continue
		}
		names = append(names, namePatterns(runner, t.Test, titles[t.ID])...)
	}
	if whole || len(names) == 0 {
		return paths, ""
	}
	return paths, "^(?:" + strings.Join(dedup(names), "|") + ")$"
}

// namePatterns are the alternatives of a pattern that select the test
// named name, whose titles are known (declared) or nil.
func namePatterns(runner, name string, titles []string) []string {
	if titles != nil {
		if runner == nodeTest {
			// A describe block's name would run every test in it.
			return []string{regexp.QuoteMeta(titles[len(titles)-1])}
		}
		return []string{regexp.QuoteMeta(strings.Join(titles, " ")) + `(?: .*)?`}
	}
	if runner != nodeTest {
		// Each " > " is where one title ends, or inside one.
		parts := strings.Split(name, " > ")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		return []string{strings.Join(parts, "(?: | > )") + `(?: .*)?`}
	}
	// Any part of the name between two places where one title may end
	// (every " > ", overlapping ones too: a title may end with " >") may
	// be one test's own title: the outermost test among them runs, and
	// its subtests with it.
	starts, ends := []int{0}, []int{}
	for i := 0; i+len(" > ") <= len(name); i++ {
		if name[i:i+len(" > ")] == " > " {
			ends = append(ends, i)
			starts = append(starts, i+len(" > "))
		}
	}
	ends = append(ends, len(name))
	var out []string
	for _, i := range starts {
		for _, j := range ends {
			if i < j {
				out = append(out, regexp.QuoteMeta(name[i:j]))
			}
		}
	}
	return out
}

func dedup(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
