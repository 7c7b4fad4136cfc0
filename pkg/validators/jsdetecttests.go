package validators

import (
	"regexp"
	"sort"

	"github.com/redfix/redfix/pkg/unidiff"
)

// q is a JavaScript string's quote: ' " or `.
const q = `['"` + "`" + `]`

// jsRunnerNameRE matches a string, or a regular expression's text, that
// names a test runner, a test file or what a test's command line shows.
var jsRunnerNameRE = regexp.MustCompile(q + `[^'"` + "`" + `]*(\b(jest|vitest|mocha|jasmine|ava)\b|node:test|--test\b|\.(test|spec)\.|__tests__)[^'"` + "`" + `]*` + q +
	`|\\\.(test|spec)\\?\.|/(jest|vitest|mocha)/`)

// jsDetections are the ways JavaScript and TypeScript code asks whether a
// test runner runs it (detectlines.go).
var jsDetections = []lineDetection{
	{re: regexp.MustCompile(`\bJEST_WORKER_ID\b|\bJEST_\w+|` + q + `JEST` + q + `|\bVITEST(_\w+)?\b|\bNODE_TEST_CONTEXT\b|\bMOCHA_\w+|` + q + `_?WORKER_ID\b`),
		how: "by a test runner's environment variables (JEST_WORKER_ID, VITEST, NODE_TEST_CONTEXT, MOCHA_…)"},
	{re: regexp.MustCompile(`\bimport\.meta\.vitest\b|__vitest_\w+__`),
		how: "by vitest's in-source tests (import.meta.vitest)"},
	{re: regexp.MustCompile(`\bNODE_ENV\b.*` + q + `test` + q + `|` + q + `test` + q + `\s*[!=]==?.*\bNODE_ENV\b`),
		how: "by NODE_ENV set to test"},
	{re: regexp.MustCompile(`\btypeof\s+(jest|vi|vitest|describe|it|test|expect|beforeEach|beforeAll|afterEach|afterAll|mocha|suite|jasmine)\b|\b(globalThis|global|window|self)\s*(\.|\[\s*` + q + `)(jest|vi|describe|it|test|expect|beforeEach|afterEach|mocha|suite|jasmine)\b|` + q + `(jest|vi|describe|it|test|expect|beforeEach|mocha|jasmine)` + q + `\s+in\s+(globalThis|global|window|self)\b`),
		how: "by looking for a test runner's globals (jest, vi, describe, it…)"},
	{re: regexp.MustCompile(`\bprocess\.(argv0?|execArgv|title|execPath)\b.*(\b(jest|vitest|mocha|jasmine|ava)\b|--test\b|\.(test|spec)\.)`),
		how: "by a test runner on its command line (process.argv, process.execArgv)"},
	{re: regexp.MustCompile(`\b(require\.main|module\.parent|process\.mainModule)\b.*(\b(jest|vitest|mocha|jasmine)\b|\.(test|spec)\.|__tests__)`),
		how: "by the module that loaded it (require.main, module.parent)"},

	{re: regexp.MustCompile(`\bNODE_ENV\b`), partner: regexp.MustCompile(q + `test` + q),
		how: "by NODE_ENV set to test"},
	{re: regexp.MustCompile(`\bnew\s+Error\s*\([^)]*\)\s*\.stack\b|\bError\.(captureStackTrace|prepareStackTrace)\b|\bcallsites?\s*\(`),
		partner: jsRunnerNameRE, how: "by looking for a test on the call stack"},
	{re: regexp.MustCompile(`\bprocess\.(argv0?|execArgv|title|execPath)\b|` + q + `/proc(/|` + q + `)`),
		partner: jsRunnerNameRE, how: "by reading its command line or its own process (process.argv, process.execArgv, /proc)"},
	{re: regexp.MustCompile(`\b(require\.main|module\.parent|process\.mainModule|module\.children)\b`),
		partner: jsRunnerNameRE, how: "by the module that loaded it (require.main, module.parent)"},
	{re: regexp.MustCompile(`\brequire\.cache\b|\bModule\._(load|resolveFilename|cache)\b|\bModule\.prototype\.require\b|\bmodule\.constructor\b|\bprocess\.moduleLoadList\b|\bregisterHooks\s*\(|\bmodule\.register\s*\(`),
		partner: jsRunnerNameRE, how: "by watching or listing its imports (require.cache, Module._load)"},
}

// jsDetectsTests names the lines a patch adds to JavaScript or TypeScript
// code (not tests, not the runners' files) that tell whether the tests
// are running, and how.
func jsDetectsTests(files []unidiff.File, isTest func(string) bool) []string {
	var bad []string
	for _, f := range files {
		p := f.NewPath
		if p == "" || !isJSSource(p) || isTest(p) {
			continue
		}
		bad = append(bad, detectInLines(p, f.Changes(), jsComment, jsDetections)...)
	}
	sort.Strings(bad)
	return bad
}
