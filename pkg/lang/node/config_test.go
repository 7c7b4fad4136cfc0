package node

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang/gaterules"
)

func TestSetupFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"package.json":      `{"jest": {"setupFilesAfterEnv": ["<rootDir>/test/after-env.js"], "testEnvironment": "node", "globalSetup": "./test/global"}}`,
		"test/after-env.js": "x\n",
		"test/global.ts":    "x\n",
		".mocharc.yml":      "require:\n  - ./test/hooks.mjs\n  - ts-node/register\nfile: test/fixtures.cjs\nspec: test/**/*.spec.js\n",
		"vitest.config.mts": "export default { test: { setupFiles: \"./src/setup-dom.ts\", environment: \"jsdom\" } };\n",
		"jest.config.json":  `{"setupFiles": ["./polyfills.js"]}`,
		"src/setup-dom.ts":  "x\n",
		"test/not-setup.js": "x\n",
	})
	got := gaterules.SortedKeys(setupFiles(dir))
	want := "polyfills.js src/setup-dom.ts test/after-env.js test/fixtures.cjs test/global.ts test/hooks.mjs"
	if strings.Join(got, " ") != want {
		t.Errorf("setup files = %v, want %s", got, want)
	}
}
