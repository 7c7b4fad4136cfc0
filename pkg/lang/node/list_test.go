package node

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// Each runner's tests are listed by file and full name, without running
// them; a test file that does not load is a build failure of that file
// alone.
func TestListAndBuild(t *testing.T) {
	for _, c := range []struct {
		name     string
		history  []string
		listed   []testrun.Listed
		broken   string // a commit adding a file that does not load
		file     string // that file
		good     string // a file that loads
		wantsMsg string
	}{
		{
			"vitest", nodetest.Price,
			[]testrun.Listed{
				{ImportPath: "src/price.test.ts", Tests: []string{"price > applies the discount", "price > totals the prices"}},
				{ImportPath: "src/round.test.ts", Tests: []string{"round > keeps cents"}},
			},
			"price: a test that does not compile\n\n-- src/broken.test.ts --\nimport { it } from 'vitest';\nit('x', () => { const a: number = ; });\n",
			"src/broken.test.ts", "src/price.test.ts", "",
		},
		{
			"jest", nodetest.Cart,
			[]testrun.Listed{
				{ImportPath: "src/cart.test.js", Tests: []string{"cart > prices a line", "cart > totals the items"}},
				{ImportPath: "src/tax.test.js", Tests: []string{"tax > adds the rate"}},
			},
			"cart: a test of a module that is not there\n\n-- src/broken.test.js --\nconst { gone } = require('./gone');\ntest('x', () => {});\n",
			"src/broken.test.js", "src/cart.test.js", "Cannot find module './gone'",
		},
		{
			"mocha", nodetest.Words,
			[]testrun.Listed{
				{ImportPath: "test/words.test.js", Tests: []string{"words > count > counts words", "words > count > counts nothing in blanks"}},
			},
			"words: a test that does not parse\n\n-- test/broken.test.js --\ndescribe('x', () => {\n",
			"test/broken.test.js", "test/words.test.js", "SyntaxError",
		},
		{
			"node:test", nodetest.Tally,
			[]testrun.Listed{
				{ImportPath: "test/tally.test.js", Tests: []string{"tally > counts each item", "tally > counts nothing"}},
			},
			"tally: a test that throws while loading\n\n-- test/broken.test.js --\nthrow new Error('broken on load');\n",
			"test/broken.test.js", "test/tally.test.js", "broken on load",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, d, dir := fixture(t, append(append([]string(nil), c.history...), c.broken)...)
			// The listing, of the files that load.
			var files []string
			for _, l := range c.listed {
				files = append(files, l.ImportPath)
			}
			listed, err := d.List(ctx, dir, files)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(listed) != fmt.Sprint(c.listed) {
				t.Errorf("listed = %v, want %v", listed, c.listed)
			}
			o, err := d.Build(ctx, dir, []string{c.file, c.good})
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Build) != 1 || o.Build[0].Package != c.file {
				t.Fatalf("build = %+v, want %s alone\n%s", o.Build, c.file, o.Output)
			}
			if !strings.Contains(o.Build[0].Message, c.wantsMsg) || o.Build[0].Message == "" {
				t.Errorf("message = %q, want it to say %q", o.Build[0].Message, c.wantsMsg)
			}
			if len(o.Passed)+len(o.Failed) != 0 {
				t.Errorf("build ran tests: %s", o.Summary())
			}
			if c.name == "jest" {
				if _, err := d.List(ctx, dir, []string{"."}); err == nil || !strings.Contains(err.Error(), c.file) {
					t.Errorf("listing a file that does not load: err = %v", err)
				}
			}
			// A run of the whole checkout reports the file as a build
			// failure and runs the others' tests.
			o, err = d.RunPackages(ctx, dir, []string{"."})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(o.Build, func(b task.Failure) bool { return b.Package == c.file }) {
				t.Errorf("run: build = %+v", o.Build)
			}
			if c.name != "mocha" && len(o.Passed) == 0 {
				t.Errorf("run: no test of the other files ran: %s\n%s", o.Summary(), o.Output)
			}
			clean(t, dir)
		})
	}
}

// A test file whose module is gone does not load: Build names it, and
// vitest's JUnit name for it (the file twice) resolves to the file.
func TestBuildUnloadable(t *testing.T) {
	ctx, d, dir := fixture(t, nodetest.PriceUnloadable...)
	o, err := d.Build(ctx, dir, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Build) != 1 || o.Build[0].Package != nodetest.PriceUnloadableFile || !strings.HasPrefix(o.Build[0].Message, nodetest.PriceUnloadableMessage) {
		t.Fatalf("build = %+v\n%s", o.Build, o.Output)
	}
	if strings.Contains(o.Build[0].Message, dir) {
		t.Errorf("the checkout's path leaks into the message: %q", o.Build[0].Message)
	}
	tg, err := d.Resolve(dir, nodetest.PriceUnloadableFile+"::"+nodetest.PriceUnloadableFile)
	if err != nil || tg.ID != nodetest.PriceUnloadableFile || !tg.IsPackage() {
		t.Errorf("resolve = %+v, %v", tg, err)
	}
	clean(t, dir)
}
