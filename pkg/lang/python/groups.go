package python

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// testGroups are the dependency groups a test run installs by default,
// where the project declares any: the tests' own.
var testGroups = []string{"test", "tests", "testing"}

// baseNames are requirement files' names for the project's own
// dependencies, not a group's.
var baseNames = []string{"", "base", "main", "common", "install", "prod", "production", "runtime"}

var groupSep = regexp.MustCompile(`[-_.]+`)

// normGroup is a group's name as pip normalises an extra's.
func normGroup(g string) string { return strings.ToLower(groupSep.ReplaceAllString(g, "-")) }

// fileGroup is the dependency group a root requirement file is named for:
// "test" for requirements-test.txt, requirements_test.txt,
// test-requirements.txt and requirements/test.txt; "" (the base) for
// requirements.txt and requirements/base.txt (see baseNames).
func fileGroup(rel string) string {
	dir, name := path.Split(rel)
	name = strings.TrimSuffix(name, ".txt")
	var g string
	switch {
	case dir == "requirements/":
		g = name
	case name == "requirements":
	case strings.HasPrefix(name, "requirements"):
		g = strings.TrimLeft(strings.TrimPrefix(name, "requirements"), "-_.")
	default:
		g = strings.TrimRight(strings.TrimSuffix(name, "requirements"), "-_.")
	}
	g = normGroup(g)
	if slices.Contains(baseNames, g) {
		return ""
	}
	return g
}

// chosen are the requirements of the files that setup installs: the base
// and the groups asked for (Driver.Groups); else the base and the tests'
// groups where the project declares any (testsDeclared, in pyproject.toml
// or setup.cfg, or a requirement file named for one); else everything,
// the groups' requirements optional (a tool the tests may not import that
// fails to install is a warning). A file left out is a note.
func (d Driver) chosen(decl declared, testsDeclared bool) (required, optional, notes []string) {
	wanted := d.asked()
	opt := false
	if len(wanted) == 0 {
		wanted, opt = testGroups, true
		for _, g := range decl.named {
			testsDeclared = testsDeclared || slices.Contains(testGroups, g)
		}
		opt = !testsDeclared
	}
	skipped := map[string]bool{}
	for i, r := range decl.requirements {
		g := decl.groups[i]
		switch {
		case g == "" || slices.Contains(wanted, g):
			required = append(required, r)
		case opt:
			optional = append(optional, r)
		default:
			skipped[g] = true
		}
	}
	for _, g := range sortedKeys(skipped) {
		notes = append(notes, fmt.Sprintf("the requirement files of group %s are not installed: the groups installed are %s", g, strings.Join(wanted, ", ")))
	}
	return required, optional, notes
}

// asked are the groups the repository asks for, normalised.
func (d Driver) asked() []string {
	var out []string
	for _, g := range d.Groups {
		out = append(out, normGroup(g))
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
