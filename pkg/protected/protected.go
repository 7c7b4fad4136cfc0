// Package protected says which files a repair has no business editing: what
// builds, tests and ships the code (build files, CI), who reviews it
// (ownership files), how git and developers' machines treat the checkout
// (git metadata, hooks, editor and environment settings) and vendored code,
// the kinds every repository has (Common); and the kinds a language driver
// adds for its own files (its module files, its linters' configuration),
// which it declares with the same Kind.
//
// An edit of a protected file is refused unless the repository's policy
// names the file explicitly: an allowed-paths pattern matches it and, at
// the protected name itself, the pattern holds that name (".github/**",
// "**/Makefile", "docs/CODEOWNERS") or the kind's own pattern ("**/*.mk",
// "Dockerfile.*"), never a wildcard. So "**", "*" or "*.yml", which a
// repository writes to allow code anywhere, unlock none of them, and "docs"
// (a directory, covering what is below it) does not unlock docs/CODEOWNERS.
// A kind may read an edit instead of refusing it (Kind.Read): a dependency's
// version bump in a module file passes without a policy.
package protected

import (
	"path"
	"slices"
	"strings"

	"github.com/redfix/redfix/pkg/unidiff"
)

// NotAllowed closes the evidence against a protected file.
const NotAllowed = "the repository's policy does not allow it"

// Kind is one kind of protected file.
type Kind struct {
	What string // "a build file"
	Why  string // why editing it is not a repair
	// Names are patterns (path.Match) for the file's base name, compared
	// in lower case (make, git and developers' file systems may fold
	// case) unless Exact; Dirs are names of directories everything below
	// which is protected.
	Names, Dirs []string
	// Exact compares Names as written (module files, as their tool reads
	// them).
	Exact bool
	// Code lets the Names' patterns claim a file of the repository's code
	// (eslint.config.*): the other kinds' patterns match a code file only
	// where they spell its name, so code named makefile.go or
	// dockerfile.py stays code.
	Code bool
	// Read, when set, judges an edit the policy does not name by what it
	// changes, from the checkout at dir after the patch: the evidence
	// against it, none when it may pass. Without Read every edit is
	// refused.
	Read func(dir, p string, f unidiff.File) []string
	// Kept says how an edit Read let through passed ("dependency versions
	// only"), for the gate's detail.
	Kept func(p string) string
}

// Path is what protects a path: its kind and the index of the segment that
// makes it protected (the protected directory, or the base).
type Path struct {
	Kind *Kind
	key  int
}

// Classify returns what protects p (slash-separated, relative) among
// kinds, the first that claims it; isCode reports a file of the
// repository's code (see Kind.Code).
func Classify(kinds []Kind, p string, isCode func(string) bool) (Path, bool) {
	segs := strings.Split(p, "/")
	base := len(segs) - 1
	code := isCode != nil && isCode(p)
	for i := range kinds {
		k := &kinds[i]
		if matchesAny(k.Names, segs[base], !k.Exact, code && !k.Code) {
			return Path{k, base}, true
		}
		for j, seg := range segs[:base] {
			if matchesAny(k.Dirs, seg, !k.Exact, false) {
				return Path{k, j}, true
			}
		}
	}
	return Path{}, false
}

// matchesAny reports whether name matches one of the patterns; literal
// only, a pattern with a wildcard matches nothing.
func matchesAny(patterns []string, name string, fold, literal bool) bool {
	if fold {
		name = strings.ToLower(name)
	}
	for _, pat := range patterns {
		if fold {
			pat = strings.ToLower(pat)
		}
		if literal && strings.ContainsAny(pat, "*?[") {
			continue
		}
		if ok, err := path.Match(pat, name); err == nil && ok {
			return true
		}
	}
	return false
}

// NamedBy reports whether one of the allowed-paths globs names the
// protected path p explicitly (see the package's comment).
func (pp Path) NamedBy(allowed []string, p string) bool {
	segs := strings.Split(p, "/")
	names := func(pat string) bool {
		return pat == segs[pp.key] || slices.Contains(pp.Kind.Names, pat) || slices.Contains(pp.Kind.Dirs, pat)
	}
	for _, g := range allowed {
		if globNames(strings.Split(strings.Trim(g, "/"), "/"), segs, 0, pp.key, names) {
			return true
		}
	}
	return false
}

// globNames is a glob match of pat against segs[i:] that also requires the
// pattern segment matched against segs[key] to be one that names says names
// it: a "**" may not stand for it, and a pattern may not stop above it.
func globNames(pat, segs []string, i, key int, names func(string) bool) bool {
	if len(pat) == 0 {
		// "dir" covers "dir/…", naming the protected segment only when
		// it was matched already.
		return i > key
	}
	if pat[0] == "**" {
		for j := i; j <= len(segs); j++ {
			if i <= key && key < j {
				break // "**" would stand for the protected segment
			}
			if globNames(pat[1:], segs, j, key, names) {
				return true
			}
		}
		return false
	}
	if i == len(segs) {
		return false
	}
	if ok, err := path.Match(pat[0], segs[i]); err != nil || !ok {
		return false
	}
	if i == key && !names(pat[0]) {
		return false
	}
	return globNames(pat[1:], segs, i+1, key, names)
}
