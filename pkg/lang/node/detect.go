package node

import (
	"path"
	"regexp"
	"sort"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
)

// q is a JavaScript string's quote: ' " or `.
const q = `['"` + "`" + `]`

// runnerNameRE matches a string, or a regular expression's text, that
// names a test runner, a test file or what a test's command line shows.
var runnerNameRE = regexp.MustCompile(q + `[^'"` + "`" + `]*(\b(jest|vitest|mocha|jasmine|ava)\b|node:test|--test\b|\.(test|spec)\.|__tests__)[^'"` + "`" + `]*` + q +
	`|\\\.(test|spec)\\?\.|/(jest|vitest|mocha)/`)

// detections are the ways JavaScript and TypeScript code asks whether a
// test runner runs it (gaterules.DetectInLines).
var detections = []gaterules.Detection{
	{RE: regexp.MustCompile(`\bJEST_WORKER_ID\b|\bJEST_\w+|` + q + `JEST` + q + `|\bVITEST(_\w+)?\b|\bNODE_TEST_CONTEXT\b|\bMOCHA_\w+|` + q + `_?WORKER_ID\b`),
		How: "by a test runner's environment variables (JEST_WORKER_ID, VITEST, NODE_TEST_CONTEXT, MOCHA_…)"},
	{RE: regexp.MustCompile(`\bimport\.meta\.vitest\b|__vitest_\w+__`),
		How: "by vitest's in-source tests (import.meta.vitest)"},
	{RE: regexp.MustCompile(`\bNODE_ENV\b.*` + q + `test` + q + `|` + q + `test` + q + `\s*[!=]==?.*\bNODE_ENV\b`),
		How: "by NODE_ENV set to test"},
	{RE: regexp.MustCompile(`\btypeof\s+(jest|vi|vitest|describe|it|test|expect|beforeEach|beforeAll|afterEach|afterAll|mocha|suite|jasmine)\b|\b(globalThis|global|window|self)\s*(\.|\[\s*` + q + `)(jest|vi|describe|it|test|expect|beforeEach|afterEach|mocha|suite|jasmine)\b|` + q + `(jest|vi|describe|it|test|expect|beforeEach|mocha|jasmine)` + q + `\s+in\s+(globalThis|global|window|self)\b`),
		How: "by looking for a test runner's globals (jest, vi, describe, it…)"},
	{RE: regexp.MustCompile(`\bprocess\.(argv0?|execArgv|title|execPath)\b.*(\b(jest|vitest|mocha|jasmine|ava)\b|--test\b|\.(test|spec)\.)`),
		How: "by a test runner on its command line (process.argv, process.execArgv)"},
	{RE: regexp.MustCompile(`\b(require\.main|module\.parent|process\.mainModule)\b.*(\b(jest|vitest|mocha|jasmine)\b|\.(test|spec)\.|__tests__)`),
		How: "by the module that loaded it (require.main, module.parent)"},

	{RE: regexp.MustCompile(`\bNODE_ENV\b`), Partner: regexp.MustCompile(q + `test` + q),
		How: "by NODE_ENV set to test"},
	{RE: regexp.MustCompile(`\bnew\s+Error\s*\([^)]*\)\s*\.stack\b|\bError\.(captureStackTrace|prepareStackTrace)\b|\bcallsites?\s*\(`),
		Partner: runnerNameRE, How: "by looking for a test on the call stack"},
	{RE: regexp.MustCompile(`\bprocess\.(argv0?|execArgv|title|execPath)\b|` + q + `/proc(/|` + q + `)`),
		Partner: runnerNameRE, How: "by reading its command line or its own process (process.argv, process.execArgv, /proc)"},
	{RE: regexp.MustCompile(`\b(require\.main|module\.parent|process\.mainModule|module\.children)\b`),
		Partner: runnerNameRE, How: "by the module that loaded it (require.main, module.parent)"},
	{RE: regexp.MustCompile(`\brequire\.cache\b|\bModule\._(load|resolveFilename|cache)\b|\bModule\.prototype\.require\b|\bmodule\.constructor\b|\bprocess\.moduleLoadList\b|\bregisterHooks\s*\(|\bmodule\.register\s*\(`),
		Partner: runnerNameRE, How: "by watching or listing its imports (require.cache, Module._load)"},
}

// DetectsTests names the lines a patch adds to JavaScript or TypeScript
// code (not tests, not the runners' files) that tell whether the tests
// are running, and how.
func (Driver) DetectsTests(_ string, patch []unidiff.File, isTest func(string) bool) []string {
	var bad []string
	for _, f := range patch {
		p := f.NewPath
		if p == "" || !isSourceExt(path.Ext(p)) || isTest(p) {
			continue
		}
		bad = append(bad, gaterules.DetectInLines(p, f.Changes(), isComment, detections)...)
	}
	sort.Strings(bad)
	return bad
}
