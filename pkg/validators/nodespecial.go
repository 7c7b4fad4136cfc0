package validators

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/unidiff"
)

// Special-casing in JavaScript and TypeScript, read with tree-sitter: the
// literals of the failing tests (the arguments of their test call but the
// title, the tables of their .each, and the variables of their file they
// name), and what a patch adds to code that is not a test to single one of
// them out that the code never knew: ===, ==, !==, != (in ifs, ternaries,
// anywhere), switch cases, startsWith, endsWith, includes, indexOf, has
// and Object.is, and the keys of lookup tables (an object literal indexed
// with [ ], directly or through the variable it is bound to).

// jsTestLiterals collects the literals of the failing tests: see the top
// of this file. Tests the driver cannot resolve, or whose file holds no
// call with their name, are passed over.
func jsTestLiterals(dir string, l Language, ids []string) map[string]testLiteral {
	lits := map[string]testLiteral{}
	for _, id := range ids {
		file, name := "", ""
		if t, err := l.Resolve(dir, id); err == nil && t.Test != "" {
			file, name = t.ImportPath, t.Test
		} else if f, n, ok := strings.Cut(id, "::"); ok {
			file, name = f, n
		} else {
			continue
		}
		src, err := readBeneath(dir, file, maxSourceBytes)
		if err != nil {
			continue
		}
		tree, ok := parseJS(file, src)
		if !ok {
			continue
		}
		vars := jsVariables(tree)
		for _, t := range jsNamed(jsTests(tree), name) {
			add := func(v string, n int) {
				if _, seen := lits[v]; !seen {
					lits[v] = testLiteral{test: t.full, where: fmt.Sprintf("%s:%d", file, n)}
				}
			}
			var scopes []*sitter.Node
			if args := t.call.ChildByFieldName("arguments"); args != nil {
				for i := uint(1); i < args.NamedChildCount(); i++ {
					scopes = append(scopes, args.NamedChild(i))
				}
			}
			for fn := t.call.ChildByFieldName("function"); fn != nil && fn.Kind() == "call_expression"; fn = fn.ChildByFieldName("function") {
				scopes = append(scopes, fn.ChildByFieldName("arguments")) // .each(table)
			}
			used := map[string]bool{}
			for _, s := range scopes {
				if s == nil {
					continue
				}
				jsLiterals(s, tree.src, add)
				walkJS(s, func(n *sitter.Node) bool {
					if n.Kind() == "identifier" {
						used[tree.text(n)] = true
					}
					return true
				})
			}
			for _, u := range sortedKeys(used) {
				if v := vars[u]; v != nil {
					jsLiterals(v, tree.src, add)
				}
			}
		}
		tree.close()
	}
	return lits
}

// jsNamed are the tests a canonical name ("price > applies 10%") names: by
// their full title, a title of .each with its placeholders (%s, %d, $a)
// standing for any text; else by their own title alone.
func jsNamed(tests []jsTest, name string) []jsTest {
	var out, byTitle []jsTest
	last := name
	if i := strings.LastIndex(name, " > "); i >= 0 {
		last = name[i+len(" > "):]
	}
	for _, t := range tests {
		if t.suite {
			continue
		}
		switch {
		case t.full == name || jsTitlePattern(t.full).MatchString(name):
			out = append(out, t)
		case t.title == last:
			byTitle = append(byTitle, t)
		}
	}
	if len(out) == 0 {
		return byTitle
	}
	return out
}

// jsPlaceholderRE matches the placeholders of .each's titles.
var jsPlaceholderRE = regexp.MustCompile(`%[sdifjoOp#%]|\$[\w.]+`)

// jsTitlePattern is a title with its placeholders matching any text.
func jsTitlePattern(title string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	rest := title
	for {
		loc := jsPlaceholderRE.FindStringIndex(rest)
		if loc == nil {
			break
		}
		b.WriteString(regexp.QuoteMeta(rest[:loc[0]]))
		b.WriteString(".*")
		rest = rest[loc[1]:]
	}
	b.WriteString(regexp.QuoteMeta(rest))
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile(`^$.`)
	}
	return re
}

// jsVariables indexes a file's variables (any scope, the first of a
// name) by name: their initial values.
func jsVariables(tree jsTree) map[string]*sitter.Node {
	vars := map[string]*sitter.Node{}
	walkJS(tree.root(), func(n *sitter.Node) bool {
		if n.Kind() == "variable_declarator" {
			name, value := n.ChildByFieldName("name"), n.ChildByFieldName("value")
			if name != nil && value != nil && name.Kind() == "identifier" {
				if _, seen := vars[tree.text(name)]; !seen {
					vars[tree.text(name)] = value
				}
			}
		}
		return true
	})
	return vars
}

// jsComparingCall are methods that compare their arguments with their
// object (or, on an array literal, its elements with their argument).
var jsComparingCall = map[string]bool{"startsWith": true, "endsWith": true, "includes": true, "indexOf": true, "has": true, "is": true, "localeCompare": true}

// jsComparing are the operators that single a value out.
var jsComparing = map[string]bool{"===": true, "==": true, "!==": true, "!=": true}

// jsSpecialCases is specialCases for JavaScript and TypeScript: what the
// patch adds to non-test modules to single out a failing test's literal
// that the modules of the directory did not hold before the patch.
func jsSpecialCases(dir string, files []unidiff.File, isTest func(string) bool, lits map[string]testLiteral) []string {
	if len(lits) == 0 {
		return nil
	}
	addedIn := map[string]map[int]bool{}
	for _, f := range files {
		if f.NewPath == "" {
			continue
		}
		m := map[int]bool{}
		for _, l := range f.Changes() {
			if l.Added() {
				m[l.NewLine] = true
			}
		}
		addedIn[f.NewPath] = m
	}
	var bad []string
	known := map[string]map[string]bool{} // directory -> literals its modules held
	for _, f := range files {
		p := f.NewPath
		if p == "" || !isJSSource(p) || isTest(p) || len(addedIn[p]) == 0 {
			continue
		}
		src, err := readBeneath(dir, p, maxSourceBytes)
		if err != nil {
			continue
		}
		tree, ok := parseJS(p, src)
		if !ok {
			continue
		}
		d := path.Dir(p)
		if known[d] == nil {
			known[d] = jsDirLiterals(dir, d, isTest, addedIn)
		}
		added := addedIn[p]
		report := func(at, lit *sitter.Node, what, verb string) {
			v, ok := jsLiteralValue(lit, src)
			if !ok {
				return
			}
			tl, inTest := lits[v]
			if !inTest || !added[line(at)] || known[d][v] {
				return
			}
			bad = append(bad, fmt.Sprintf("%s:%d: special-cases a value of the failing test: %s %s %s, which %s uses at %s and the code never did before",
				p, line(at), what, verb, showLiteral(v), tl.test, tl.where))
		}
		lookups := jsLookupTables(tree)
		walkJS(tree.root(), func(n *sitter.Node) bool {
			switch n.Kind() {
			case "binary_expression":
				if op := n.ChildByFieldName("operator"); op != nil && jsComparing[op.Kind()] {
					what := oneLineText(tree.text(n), 120)
					report(n, n.ChildByFieldName("left"), what, "compares with")
					report(n, n.ChildByFieldName("right"), what, "compares with")
				}
			case "switch_case":
				if v := n.ChildByFieldName("value"); v != nil {
					report(v, v, "case "+oneLineText(tree.text(v), 120), "compares with")
				}
			case "call_expression":
				fn, args := n.ChildByFieldName("function"), n.ChildByFieldName("arguments")
				if fn == nil || args == nil || fn.Kind() != "member_expression" {
					break
				}
				prop, obj := fn.ChildByFieldName("property"), fn.ChildByFieldName("object")
				if prop == nil || obj == nil || !jsComparingCall[tree.text(prop)] {
					break
				}
				what := oneLineText(tree.text(n), 120)
				for i := uint(0); i < args.NamedChildCount(); i++ {
					report(n, args.NamedChild(i), what, "compares with")
				}
				if obj.Kind() == "array" {
					for i := uint(0); i < obj.NamedChildCount(); i++ {
						report(n, obj.NamedChild(i), what, "compares with")
					}
				}
			case "object":
				name, ok := lookups[n.Id()]
				if !ok {
					break
				}
				for i := uint(0); i < n.NamedChildCount(); i++ {
					if pair := n.NamedChild(i); pair.Kind() == "pair" {
						if k := pair.ChildByFieldName("key"); k != nil {
							report(pair, k, "the lookup table "+name, "is keyed by")
						}
					}
				}
			}
			return true
		})
		tree.close()
	}
	sort.Strings(bad)
	return dedupStrings(bad)
}

// jsLookupTables are the object literals a file indexes with [ ]: those
// indexed directly, and those bound to a variable the file indexes
// (PRICES[qty]), by node id, with how they are named.
func jsLookupTables(tree jsTree) map[uintptr]string {
	indexed := map[string]bool{}
	out := map[uintptr]string{}
	walkJS(tree.root(), func(n *sitter.Node) bool {
		if n.Kind() == "subscript_expression" {
			if obj := n.ChildByFieldName("object"); obj != nil {
				obj = jsUnwrap(obj)
				switch obj.Kind() {
				case "identifier":
					indexed[tree.text(obj)] = true
				case "object":
					out[obj.Id()] = "indexed in place"
				}
			}
		}
		return true
	})
	walkJS(tree.root(), func(n *sitter.Node) bool {
		if n.Kind() == "variable_declarator" {
			name, value := n.ChildByFieldName("name"), n.ChildByFieldName("value")
			if name != nil && value != nil && indexed[tree.text(name)] {
				if v := jsUnwrap(value); v.Kind() == "object" {
					out[v.Id()] = tree.text(name)
				}
			}
		}
		return true
	})
	return out
}

// jsUnwrap is an expression without its parentheses and TypeScript's
// assertions (as, satisfies, !).
func jsUnwrap(n *sitter.Node) *sitter.Node {
	for {
		switch n.Kind() {
		case "parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression":
			if n.NamedChildCount() == 0 {
				return n
			}
			n = n.NamedChild(0)
		default:
			return n
		}
	}
}

// jsDirLiterals are the literals of the non-test JavaScript and TypeScript
// modules in the directory d, outside the lines the patch added.
func jsDirLiterals(dir, d string, isTest func(string) bool, addedIn map[string]map[int]bool) map[string]bool {
	out := map[string]bool{}
	names, err := listFiles(dir, d)
	if err != nil {
		return out
	}
	for _, name := range names {
		p := path.Join(d, name)
		if !isJSSource(name) || isTest(p) {
			continue
		}
		src, err := readBeneath(dir, p, maxSourceBytes)
		if err != nil {
			continue
		}
		tree, ok := parseJS(p, src)
		if !ok {
			continue
		}
		added := addedIn[p]
		jsLiterals(tree.root(), src, func(v string, n int) {
			if !added[n] {
				out[v] = true
			}
		})
		tree.close()
	}
	return out
}
