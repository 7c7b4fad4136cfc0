package golang

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/protected"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/untrusted"
)

// ProtectedFiles are Go's protected files: the module files, read by what
// an edit changes (moduleViolations); golangci-lint's configuration, which
// decides what CI's checks let through; and mage's and goreleaser's files,
// which build and ship the code.
func (Driver) ProtectedFiles() []protected.Kind {
	return []protected.Kind{
		{
			What:  "a module file",
			Why:   "the module files decide which code is built",
			Names: []string{"go.mod", "go.sum", "go.work", "go.work.sum"},
			Exact: true,
			Read:  moduleViolations,
			Kept: func(p string) string {
				if path.Base(p) == "go.sum" {
					return "checksums added or dropped only"
				}
				return "dependency versions only"
			},
		},
		{What: protected.CI.What, Why: protected.CI.Why, Names: []string{".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"}},
		{What: protected.Build.What, Why: protected.Build.Why, Names: []string{"magefile.go", ".goreleaser.yml", ".goreleaser.yaml"}, Dirs: []string{"magefiles"}},
	}
}

// moduleViolations judges an edit of a Go module file that the policy does
// not name.
//
// go.work and go.work.sum are refused whatever the edit: a workspace points
// the build at local module directories, as a replace directive does.
// Adding, deleting or renaming a go.mod is refused: a new go.mod makes its
// directory a module of its own, which the enclosing module's go test ./...
// then skips.
//
// In an edited go.mod only requirement changes pass: a new version of a
// module already required, a requirement dropped, comments and layout.
// Pinning back a dependency whose new release broke the tests is an honest
// repair, the new version is in the diff for the reviewer, and the go
// command checks its content against go.sum and the checksum database. What
// passes no further is: a module not required before (code from outside the
// repository that no gate reads), a pseudo-version (a commit no release
// vouches for), and every other directive: replace (another fork or a local
// directory), go and toolchain (language semantics and the toolchain that is
// downloaded and run), godebug (run-time behaviour), tool, ignore (hides
// directories from ./...), exclude, retract, module.
//
// In go.sum, checksums may be added and dropped (what go mod tidy does after
// a requirement changes) but not changed: another checksum for the same
// version pins other content. Deleting go.sum is refused.
func moduleViolations(dir, p string, f unidiff.File) []string {
	base := path.Base(p)
	refuse := func(what, why string) []string {
		return []string{fmt.Sprintf("%s: %s (%s; %s)", p, what, why, protected.NotAllowed)}
	}
	switch {
	case base == "go.work" || base == "go.work.sum":
		return refuse(f.Verb()+" a workspace file", "go.work points the build at local module directories, as a replace directive does")
	case f.Binary:
		return refuse(f.Verb()+" a module file as binary data", "the module files decide which code is built")
	case base == "go.sum" && f.NewPath == "":
		return refuse("deletes go.sum", "go.sum pins the content of every dependency")
	case base == "go.sum" && (f.OldPath == "" || f.OldPath == f.NewPath):
		return goSumViolations(p, f)
	case f.OldPath == "":
		return refuse("adds a module file", "a new go.mod makes its directory a module of its own, which the enclosing module's go test ./... no longer runs")
	case f.OldPath != f.NewPath:
		return refuse(f.Verb()+" a module file", "the module files decide which code is built and tested")
	}
	return goModViolations(dir, p, f)
}

// goModViolations reads the go.mod after the patch from dir, the one before
// it by undoing f, and compares what they say.
func goModViolations(dir, p string, f unidiff.File) []string {
	data, err := untrusted.ReadFile(dir, p, maxModFileBytes)
	if err == nil {
		var old string
		if old, err = f.Undo(string(data)); err == nil {
			return compareModFiles(p, parseModFile(old), parseModFile(string(data)))
		}
	}
	return []string{fmt.Sprintf("%s: edits a module file that cannot be checked (%v; %s)", p, err, protected.NotAllowed)}
}

// maxModFileBytes bounds the go.mod the gate reads.
const maxModFileBytes = 1 << 20

// modFile is what a go.mod says, reduced to what the gate compares.
type modFile struct {
	single  map[string]string          // module, go, toolchain: their argument
	require map[string]map[string]bool // module path: its versions
	other   map[string]int             // every other directive as "verb args", counted
}

// parseModFile reads a go.mod leniently: a line the go command would not
// accept is kept as an "other" directive, so changing it is seen.
func parseModFile(text string) modFile {
	m := modFile{single: map[string]string{}, require: map[string]map[string]bool{}, other: map[string]int{}}
	block := ""
	for _, line := range strings.Split(text, "\n") {
		toks := modTokens(line)
		switch {
		case len(toks) == 0:
		case block != "" && len(toks) == 1 && toks[0] == ")":
			block = ""
		case block != "":
			m.add(block, toks)
		case len(toks) == 2 && toks[1] == "(":
			block = toks[0]
		default:
			m.add(toks[0], toks[1:])
		}
	}
	return m
}

func (m modFile) add(verb string, args []string) {
	switch {
	case verb == "module" || verb == "go" || verb == "toolchain":
		m.single[verb] = strings.Join(args, " ")
	case verb == "require" && len(args) == 2:
		if m.require[args[0]] == nil {
			m.require[args[0]] = map[string]bool{}
		}
		m.require[args[0]][args[1]] = true
	default:
		m.other[strings.Join(append([]string{verb}, args...), " ")]++
	}
}

// modTokens splits a go.mod line into its tokens: words, quoted strings
// (unquoted) and parentheses, without the comment.
func modTokens(line string) []string {
	var toks []string
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(line[i:], "//"):
			return toks
		case c == '(' || c == ')':
			toks = append(toks, string(c))
			i++
		case c == '"' || c == '`':
			j := i + 1
			for j < len(line) && line[j] != c {
				if c == '"' && line[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(line))
			tok := line[i:j]
			if s, err := strconv.Unquote(tok); err == nil {
				tok = s
			}
			toks = append(toks, tok)
			i = j
		default:
			j := i
			for j < len(line) && !strings.ContainsRune(" \t\r()\"`", rune(line[j])) && !strings.HasPrefix(line[j:], "//") {
				j++
			}
			toks = append(toks, line[i:j])
			i = j
		}
	}
	return toks
}

// directiveWhy says why a patch may not change a go.mod directive.
var directiveWhy = map[string]string{
	"module":    "the module line names the module",
	"go":        "the go line sets the language version and the oldest toolchain that may build the module",
	"toolchain": "the toolchain line chooses the Go toolchain that is downloaded and run",
	"replace":   "a replace directive builds a dependency from another fork or a local directory",
	"exclude":   "an exclude directive changes which versions of a dependency are chosen",
	"retract":   "a retract directive speaks for the module's published versions",
	"godebug":   "a godebug directive changes how the standard library behaves, under test too",
	"tool":      "a tool directive adds a program that go tool runs",
	"ignore":    "an ignore directive hides directories from ./..., and so from go test ./...",
	"require":   "the gate reads a requirement as a module path and a version",
}

// compareModFiles lists what changed from old to new that a repair may not
// change.
func compareModFiles(p string, before, after modFile) []string {
	var bad []string
	refuse := func(what, verb string) {
		why := directiveWhy[verb]
		if why == "" {
			why = "go.mod directives other than require change how the module builds"
		}
		bad = append(bad, fmt.Sprintf("%s: %s (%s; %s)", p, what, why, protected.NotAllowed))
	}
	for _, verb := range []string{"module", "go", "toolchain"} {
		o, n := before.single[verb], after.single[verb]
		switch {
		case o == n:
		case o == "":
			refuse(fmt.Sprintf("adds the %s line %s", verb, n), verb)
		case n == "":
			refuse(fmt.Sprintf("removes the %s line %s", verb, o), verb)
		default:
			refuse(fmt.Sprintf("changes the %s line from %s to %s", verb, o, n), verb)
		}
	}
	for _, mod := range gaterules.SortedKeys(after.require) {
		was := strings.Join(gaterules.SortedKeys(before.require[mod]), ", ")
		for _, v := range gaterules.SortedKeys(after.require[mod]) {
			switch {
			case before.require[mod][v]:
			case was == "":
				bad = append(bad, fmt.Sprintf("%s: requires a new module %s %s (a new dependency is code from outside the repository that no gate reads; %s)", p, mod, v, protected.NotAllowed))
			case pseudoVersionRE.MatchString(v):
				bad = append(bad, fmt.Sprintf("%s: moves %s from %s to the untagged commit %s (a pseudo-version pins a commit that no release vouches for; %s)", p, mod, was, v, protected.NotAllowed))
			}
		}
	}
	for _, d := range gaterules.SortedKeys(after.other) {
		if after.other[d] > before.other[d] {
			refuse(fmt.Sprintf("adds the directive %q", d), strings.Fields(d)[0])
		}
	}
	for _, d := range gaterules.SortedKeys(before.other) {
		if before.other[d] > after.other[d] {
			refuse(fmt.Sprintf("removes the directive %q", d), strings.Fields(d)[0])
		}
	}
	return bad
}

// pseudoVersionRE matches the go command's pseudo-versions:
// vX.0.0-yyyymmddhhmmss-commit, vX.Y.Z-pre.0.yyyymmddhhmmss-commit and
// vX.Y.Z-0.yyyymmddhhmmss-commit.
var pseudoVersionRE = regexp.MustCompile(`^v\d+\.\d+\.\d+-(?:[0-9A-Za-z.-]*\.)?\d{14}-[0-9a-f]{12}(?:\+incompatible)?$`)

// goSumViolations refuses checksums changed for a version go.sum already
// pinned.
func goSumViolations(p string, f unidiff.File) []string {
	removed := map[string]string{}
	added := map[string]string{}
	for _, l := range f.Changes() {
		fs := strings.Fields(l.Text)
		if len(fs) != 3 {
			continue // not a checksum line: the go command refuses it
		}
		if l.Added() {
			added[fs[0]+" "+fs[1]] = fs[2]
		} else {
			removed[fs[0]+" "+fs[1]] = fs[2]
		}
	}
	var bad []string
	for _, k := range gaterules.SortedKeys(added) {
		if old, ok := removed[k]; ok && old != added[k] {
			bad = append(bad, fmt.Sprintf("%s: changes the checksum of %s (a checksum pins a version's content, another one pins other content; %s)", p, k, protected.NotAllowed))
		}
	}
	return bad
}
