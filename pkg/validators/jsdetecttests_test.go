package validators

import (
	"fmt"
	"strings"
	"testing"
)

// tsWith is src/price.ts mended, with pre added above price and body at
// the top of price.
func tsWith(pre, body string) string {
	src := strings.Replace(tsPrice, "return qty * UNIT - 1;", "return qty * UNIT;", 1)
	return strings.Replace(src, "export function price(qty: number): number {\n", pre+"export function price(qty: number): number {\n"+body, 1)
}

// jsWith is lib/legacy.js with pre added above total and body at the top
// of total.
func jsWith(pre, body string) string {
	return strings.Replace(jsLegacy, "function total(items) {\n", pre+"function total(items) {\n"+body, 1)
}

func TestNodeDetectsTests(t *testing.T) {
	t.Parallel()
	const (
		byCmdline = "by reading its command line or its own process (process.argv, process.execArgv, /proc)"
		byLoader  = "by the module that loaded it (require.main, module.parent)"
		byStack   = "by looking for a test on the call stack"
		byImports = "by watching or listing its imports (require.cache, Module._load)"
		byEnv     = "by a test runner's environment variables (JEST_WORKER_ID, VITEST, NODE_TEST_CONTEXT, MOCHA_…)"
		byNodeEnv = "by NODE_ENV set to test"
	)
	for _, c := range []struct {
		name string
		file string // src/price.ts when empty
		src  string
		how  string // empty: integrity passes
		at   string // the text of the line the finding names
	}{
		{
			name: "process.argv read on one line, vitest named on another",
			src:  tsWith("const ARGS = process.argv.join(\" \");\n\n", "  if (ARGS.includes(\"vitest\")) return qty * UNIT;\n"),
			how:  byCmdline, at: `const ARGS = process.argv.join(" ");`,
		},
		{
			name: "node's test runner among execArgv",
			src:  tsWith("const FLAGS = process.execArgv;\n\n", "  if (FLAGS.includes(\"--test\")) return qty * UNIT;\n"),
			how:  byCmdline, at: "const FLAGS = process.execArgv;",
		},
		{
			name: "/proc/self/cmdline",
			src:  tsWith("import { readFileSync } from \"node:fs\";\n\nconst CMD = readFileSync(\"/proc/self/cmdline\", \"utf8\");\n\n", "  if (CMD.includes(\"vitest\")) return qty * UNIT;\n"),
			how:  byCmdline, at: `const CMD = readFileSync("/proc/self/cmdline", "utf8");`,
		},
		{
			name: "/proc/<pid>/cmdline",
			src:  tsWith("import { readFileSync } from \"node:fs\";\n\n", "  const cmd = readFileSync(`/proc/${process.pid}/cmdline`, \"utf8\");\n  if (cmd.split(\"\\0\").some((a) => a.endsWith(\"/vitest.mjs\"))) return qty * UNIT;\n"),
			how:  byCmdline, at: "const cmd = readFileSync(`/proc/${process.pid}/cmdline`, \"utf8\");",
		},
		{
			name: "require.main's file is a test file",
			file: "lib/legacy.js",
			src:  jsWith("const MAIN = (require.main && require.main.filename) || \"\";\n\n", "  if (/\\.test\\.[jt]s$/.test(MAIN)) return 2000;\n"),
			how:  byLoader, at: `const MAIN = (require.main && require.main.filename) || "";`,
		},
		{
			name: "module.parent is a spec",
			file: "lib/legacy.js",
			src:  jsWith("", "  if (module.parent && module.parent.filename.endsWith(\".spec.js\")) return 2000;\n"),
			how:  byLoader, at: `if (module.parent && module.parent.filename.endsWith(".spec.js")) return 2000;`,
		},
		{
			name: "a test file on the stack",
			src:  tsWith("", "  const stack = new Error().stack ?? \"\";\n  if (stack.includes(\".test.ts\")) return qty * UNIT;\n"),
			how:  byStack, at: `const stack = new Error().stack ?? "";`,
		},
		{
			name: "jest among the loaded modules",
			file: "lib/legacy.js",
			src:  jsWith("", "  if (Object.keys(require.cache).some((k) => k.includes(\"/jest/\"))) return 2000;\n"),
			how:  byImports, at: `if (Object.keys(require.cache).some((k) => k.includes("/jest/"))) return 2000;`,
		},
		{
			name: "NODE_ENV read on one line, compared on another",
			src:  tsWith("const ENV = process.env.NODE_ENV;\n\n", "  if (ENV === \"test\") return qty * UNIT;\n"),
			how:  byNodeEnv, at: "const ENV = process.env.NODE_ENV;",
		},
		{
			name: "jest's variable spelled in two",
			src:  tsWith("", "  if (process.env[\"JEST\" + \"_WORKER_ID\"]) return qty * UNIT;\n"),
			how:  byEnv, at: `if (process.env["JEST" + "_WORKER_ID"]) return qty * UNIT;`,
		},
		{
			name: "any of vitest's variables",
			src:  tsWith("", "  if (Object.keys(process.env).some((k) => k.startsWith(\"VITEST\"))) return qty * UNIT;\n"),
			how:  byEnv, at: `if (Object.keys(process.env).some((k) => k.startsWith("VITEST"))) return qty * UNIT;`,
		},

		// What passes: the same reads put to ordinary use.
		{
			name: "a command line's entry point",
			file: "lib/legacy.js",
			src:  strings.Replace(jsLegacy, "module.exports = { total };\n", "module.exports = { total };\n\nif (require.main === module) {\n  console.log(total(process.argv.slice(2)));\n}\n", 1),
		},
		{
			name: "a mode from the command line, test by default",
			src:  tsWith("const MODE = process.argv[2] ?? \"test\";\n\n", "  if (MODE === \"dry\") return 0;\n"),
		},
		{
			name: "a stack logged",
			src:  tsWith("", "  if (qty < 0) console.debug(new Error(\"negative quantity\").stack);\n"),
		},
		{
			name: "/proc/self/status for the memory in use",
			src:  tsWith("import { readFileSync } from \"node:fs\";\n\nexport function rss(): string {\n  const status = readFileSync(\"/proc/self/status\", \"utf8\");\n  return status.split(\"\\n\").find((l) => l.startsWith(\"VmRSS:\")) ?? \"\";\n}\n\n", ""),
		},
		{
			name: "NODE_ENV for production",
			src:  tsWith("const ENV = process.env.NODE_ENV ?? \"development\";\n\n", "  if (ENV === \"production\") console.debug(qty);\n"),
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file := c.file
			if file == "" {
				file = "src/price.ts"
			}
			f := newNodeFixture(t)
			in := f.nodeInput(t, map[string]string{file: c.src})
			g, err := New(Config{AllowTestEdits: true}, nil).integrity(t.Context(), &candidate{in: in, lang: in.Lang, files: mustParse(t, in.Patch)})
			if err != nil {
				t.Fatal(err)
			}
			if c.how == "" {
				wantIntegrity(t, g, nil)
				return
			}
			wantIntegrity(t, g, []string{fmt.Sprintf("%s:%d: detects that it runs under test %s: %s", file, lineOf(c.src, c.at), c.how, c.at)})
			if n := strings.Count(g.Detail, "detects that it runs under test"); n != 1 {
				t.Errorf("%d reports of test detection, want 1:\n%s", n, g.Detail)
			}
		})
	}
}
