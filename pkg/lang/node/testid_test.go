package node

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// genNode is a describe block or a test of a generated file: node:test's
// tests may have subtests.
type genNode struct {
	title    string
	suite    bool
	children []*genNode
}

// genTitle is a title that a split on " > " or a dot reads wrongly.
func genTitle(rng *rand.Rand) string {
	words := []string{"a", "b > c", " > ", "x.y", "p::q", "(1+1)", "$", "[z]", "?", "a b", ">", "*"}
	var b strings.Builder
	for range 1 + rng.IntN(3) {
		b.WriteString(words[rng.IntN(len(words))])
	}
	return strings.TrimSpace(b.String())
}

// genTree makes describe blocks holding tests, and (with subtests) tests
// holding tests, depth levels deep.
func genTree(rng *rand.Rand, depth int, subtests bool) []*genNode {
	var out []*genNode
	for range 1 + rng.IntN(3) {
		n := &genNode{title: genTitle(rng)}
		if n.title == "" {
			n.title = "t"
		}
		switch {
		case depth > 0 && rng.IntN(2) == 0:
			n.suite = true
			n.children = genTree(rng, depth-1, subtests)
		case depth > 0 && subtests && rng.IntN(3) == 0:
			n.children = genTree(rng, depth-1, subtests)
		}
		out = append(out, n)
	}
	return out
}

// genTest is a test of a tree: its chain of titles, and which of them are
// describe blocks.
type genTest struct {
	titles []string
	suites []bool
}

func (g genTest) id() string { return strings.Join(g.titles, " > ") }

func leaves(nodes []*genNode, titles []string, suites []bool, out *[]genTest) {
	for _, n := range nodes {
		t := append(append([]string(nil), titles...), n.title)
		s := append(append([]bool(nil), suites...), n.suite)
		if !n.suite {
			*out = append(*out, genTest{titles: t, suites: s})
		}
		leaves(n.children, t, s, out)
	}
}

// runs says whether the runner, given pattern, runs the test g: jest,
// vitest and mocha match the titles joined by spaces; node:test runs a
// test when it, or a describe block or test around its outermost test,
// matches its own title (a test that does not match is skipped with its
// subtests).
func runs(runner string, pattern *regexp.Regexp, g genTest) bool {
	if runner != nodeTest {
		return pattern.MatchString(strings.Join(g.titles, " "))
	}
	for i, title := range g.titles {
		if pattern.MatchString(title) {
			return true
		}
		if !g.suites[i] {
			return false
		}
	}
	return false
}

// Whatever its titles hold (" > ", spaces, regular expressions' signs),
// a test asked by its canonical id is run by each runner's name pattern,
// whether its file declares its titles with literal names or not: over
// generated describe blocks, tests and node:test's subtests.
func TestSelectionRunsTheAskedTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 38))
	for i := range 500 {
		runner := []string{vitest, jest, mocha, nodeTest}[rng.IntN(4)]
		var tests []genTest
		leaves(genTree(rng, 3, runner == nodeTest), nil, nil, &tests)
		g := tests[rng.IntN(len(tests))]
		target := testTarget("src/x.test.js", g.id())
		known := []map[string][]string{nil}
		if !slices.Contains(g.suites[:len(g.suites)-1], false) {
			// A file declares its tests in describe blocks (titlesOf);
			// subtests are made as their test runs.
			known = append(known, map[string][]string{target.ID: g.titles})
		}
		for _, titles := range known {
			_, pattern := selection(runner, []testrun.Target{target}, titles)
			re, err := regexp.Compile(pattern)
			if err != nil {
				t.Fatalf("case %d (%s): pattern %q: %v", i, runner, pattern, err)
			}
			if !runs(runner, re, g) {
				t.Fatalf("case %d (%s, titles known %v): %q does not run %q", i, runner, titles != nil, pattern, g.titles)
			}
		}
	}
}

// titlesFile declares tests whose titles hold " > ", one with a title made
// at run time, and (for node:test) subtests; the asked ones pass, their
// siblings fail.
func titlesFile(runner string) (file, src string, pass, fail []string) {
	head := map[string]string{
		vitest:   "import { describe, it } from 'vitest';\nconst ok = (c) => { if (!c) throw new Error('no'); };\n",
		jest:     "const ok = (c) => { if (!c) throw new Error('no'); };\n",
		mocha:    "const ok = (c) => { if (!c) throw new Error('no'); };\n",
		nodeTest: "const { describe, it, test } = require('node:test');\nconst ok = (c) => { if (!c) throw new Error('no'); };\n",
	}[runner]
	file = map[string]string{vitest: "src/titles.test.ts", jest: "src/titles.test.js", mocha: "test/titles.test.js", nodeTest: "test/titles.test.js"}[runner]
	src = head + `
describe('sets', () => {
  it('a > b holds', () => { ok(true); });
  it('a', () => { ok(false); });
  const made = ['k', 'v'].join(' > ');
  it(made, () => { ok(true); });
  it('k', () => { ok(false); });
});
`
	pass = []string{file + "::sets > a > b holds", file + "::sets > k > v"}
	fail = []string{file + "::sets > a", file + "::sets > k"}
	if runner == nodeTest {
		src += `
test('outer', async (t) => {
  await t.test('inner', () => { ok(true); });
  await t.test('other', () => { ok(false); });
});
`
		pass = append(pass, file+"::outer > inner")
	}
	return file, src, pass, fail
}

// Through each real runner, tests whose titles hold " > " (declared, or
// made at run time) and a node:test subtest run when asked by their ids,
// and come back under them, passing; their failing siblings are not asked
// for.
func TestRunTitlesHoldingTheSeparator(t *testing.T) {
	for _, c := range []struct {
		runner  string
		history []string
	}{
		{vitest, nodetest.Price},
		{jest, nodetest.Cart},
		{mocha, nodetest.Words},
		{nodeTest, nodetest.Tally},
	} {
		t.Run(c.runner, func(t *testing.T) {
			t.Parallel()
			file, src, pass, _ := titlesFile(c.runner)
			commit := fmt.Sprintf("titles: separators in titles\n\n-- %s --\n%s", file, src)
			ctx, d, dir := fixture(t, append(append([]string(nil), c.history...), commit)...)
			o, err := d.Run(ctx, dir, pass, 1)
			if err != nil {
				t.Fatal(err)
			}
			// node:test matches each test's own title: a name whose titles
			// the file does not declare runs every test one of its parts
			// could be the title of (their failures are others'); the
			// others run only the asked tests.
			others := len(o.Others)
			if c.runner == nodeTest {
				others = 0
			}
			if !slices.Equal(sorted(o.Passed), sorted(pass)) || len(o.Failed)+len(o.Missing)+others != 0 {
				t.Errorf("passed %q, failed %q, missing %q, others %q (%s)\n%s", o.Passed, failedIDs(o.Failed), o.Missing, failedIDs(o.Others), o.Summary(), o.Output)
			}
			for _, id := range pass {
				if !(Driver{}).DeclaresTest(dir, id) && !strings.Contains(id, "k > v") {
					t.Errorf("%s is not declared", id)
				}
			}
			clean(t, dir)
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func failedIDs(fs []task.Failure) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID())
	}
	return out
}
