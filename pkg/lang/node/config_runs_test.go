package node

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/sandbox"
)

// A project's runner configuration in each common form loads in a
// confined run, node_modules read-only: vite bundles a TypeScript or ESM
// configuration into node_modules/.vite-temp before loading it, which the
// run writes in a tmpfs of its own (without one, vitest stopped with
// "failed to load config" and the failure was dropped as not reproduced).
// Nothing a run wrote there is left in the cache for a later run.
func TestRunnersLoadTheirConfigurationFiles(t *testing.T) {
	vitestCfg := "import { defineConfig } from 'vitest/config'\n\nexport default defineConfig({ test: { include: ['src/**/*.test.ts'] } })\n"
	for _, c := range []struct {
		name, file, config string
		history            []string
		test               string
		fails              bool
	}{
		{"vitest.config.ts", "vitest.config.ts", vitestCfg, nodetest.Price, nodetest.PriceTest, true},
		{"vitest.config.mts", "vitest.config.mts", vitestCfg, nodetest.Price, nodetest.PriceTest, true},
		{"vite.config.mts", "vite.config.mts", "/// <reference types=\"vitest/config\" />\nimport { defineConfig } from 'vite'\n\nexport default defineConfig({ test: { environment: 'node' } })\n", nodetest.Price, nodetest.PriceTest, true},
		{"jest.config.ts", "", "", nodetest.CartTS, nodetest.CartPassing, false},
		{"jest.config.js", "jest.config.js", "module.exports = { testEnvironment: 'node', testMatch: ['**/src/**/*.test.js'] };\n", nodetest.Cart, nodetest.CartTest, true},
		{".mocharc.yml", ".mocharc.yml", "spec: test/**/*.test.js\nrecursive: true\n", nodetest.Words, nodetest.WordsTest, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			history := slices.Clone(c.history)
			if c.file != "" {
				history = append(history, "config: "+c.file+"\n\n-- "+c.file+" --\n"+c.config)
			}
			ctx, d, dir := fixture(t, history...)
			for run := range 2 {
				o, err := d.Run(ctx, dir, []string{c.test}, 1)
				if err != nil {
					t.Fatal(err)
				}
				ran := slices.Equal(o.Passed, []string{c.test})
				if c.fails {
					ran = len(o.Failed) == 1 && o.Failed[0].ID() == c.test
				}
				if !ran || len(o.Build) != 0 {
					t.Fatalf("run %d: %s, want %s to have run (failing: %v)\n%s", run, o.Summary(), c.test, c.fails, o.Output)
				}
			}
			if sandbox.From(ctx) == nil {
				return
			}
			modules, err := d.prepare(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range runnerScratch {
				left, err := os.ReadDir(filepath.Join(modules, name))
				if err != nil {
					t.Fatalf("setup made no %s: %v", name, err)
				}
				if len(left) != 0 {
					t.Errorf("a run left %s/%s in the cache for the next", name, left[0].Name())
				}
			}
			clean(t, dir)
		})
	}
}
