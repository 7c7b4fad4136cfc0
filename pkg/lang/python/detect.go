package python

import (
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
)

// testNameRE matches a string that names a test, a test runner or what
// their frames and command lines show.
var testNameRE = regexp.MustCompile(`["'][^"']*(test_|_test\b|conftest|pytest|unittest|py\.test|\bnose2?\b)[^"']*["']`)

// detections are the ways Python code asks whether pytest (or unittest)
// runs it, read from the lines a patch adds (gaterules.DetectInLines).
var detections = []gaterules.Detection{
	{RE: regexp.MustCompile(`PYTEST_|["']PYTEST|CURRENT_TEST`),
		How: "by pytest's environment variables (PYTEST_CURRENT_TEST, PYTEST_…)"},
	{RE: regexp.MustCompile(`["'](_?pytest|unittest)["']\s*(not\s+)?in\s+sys\.modules|sys\.modules\s*(\.get\s*\(|\[|\.__contains__\s*\()\s*["'](_?pytest|unittest)\b|find_spec\(\s*["']_?pytest`),
		How: "by looking for pytest or unittest among the loaded modules (sys.modules)"},
	{RE: regexp.MustCompile(`["']_?pytest["']\s*(not\s+)?in\s+sys\.(orig_)?argv|sys\.(orig_)?argv.*pytest|["']py\.test`),
		How: "by pytest on its command line (sys.argv)"},
	// A module that is not a test has no use for pytest but to learn
	// whether the tests run (or whether pytest is installed, which it is
	// where they do); a pytest plugin's or a test helper's module has.
	{RE: regexp.MustCompile(`^(import|from)\s+_?pytest\b|\bimport_module\(\s*["']_?pytest\b|__import__\(\s*["']_?pytest\b`),
		How: "by importing pytest into code that is not a test", Exempt: testSupport},

	{RE: regexp.MustCompile(`\binspect\.(stack|currentframe|getouterframes|getframeinfo)\s*\(|\bsys\._getframe\s*\(|\btraceback\.(extract_stack|format_stack|walk_stack|print_stack)\s*\(`),
		Partner: testNameRE, How: "by looking for a test on the call stack"},
	{RE: regexp.MustCompile(`\bsys\.(argv|orig_argv|executable)\b|["'](/proc/|/proc["'])|\bpsutil\.Process\b|\b__main__\b.*\b__file__\b|sys\.modules\s*\[\s*["']__main__|\b(environ\.get|environ|getenv)\s*[(\[]\s*["']_["']`),
		Partner: testNameRE, How: "by reading its command line or its own process (sys.argv, /proc, __main__)"},
	{RE: regexp.MustCompile(`\bsys\.(meta_path|path_hooks|path_importer_cache|modules|addaudithook)\b|\b(builtins|__builtins__)\b.*\b__import__\b|\bMetaPathFinder\b|\bPathEntryFinder\b`),
		Partner: testNameRE, How: "by watching or listing its imports (sys.meta_path, sys.path_hooks, sys.modules)"},
}

// DetectsTests names the lines a patch adds to Python modules (not tests)
// that tell whether the tests are running, and how.
func (Driver) DetectsTests(_ string, patch []unidiff.File, isTest func(string) bool) []string {
	var bad []string
	for _, f := range patch {
		p := f.NewPath
		if p == "" || !strings.HasSuffix(p, ".py") || isTest(p) {
			continue
		}
		bad = append(bad, gaterules.DetectInLines(p, f.Changes(), isComment, detections)...)
	}
	return bad
}

func isComment(t string) bool { return strings.HasPrefix(t, "#") }

// testSupport reports a module whose path says it serves the tests (a
// pytest plugin, testing helpers, fixtures): one that may import pytest.
func testSupport(p string) bool {
	for _, seg := range strings.Split(strings.TrimSuffix(p, ".py"), "/") {
		seg = strings.TrimPrefix(seg, "_")
		if strings.HasPrefix(seg, "test") || strings.HasPrefix(seg, "pytest") || strings.Contains(seg, "testing") ||
			strings.HasSuffix(seg, "_test") || strings.HasSuffix(seg, "_tests") || strings.HasPrefix(seg, "fixtures") {
			return true
		}
	}
	return false
}
