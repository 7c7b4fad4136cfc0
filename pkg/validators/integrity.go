package validators

import (
	"github.com/redfix/redfix/pkg/repoconfig"

	"context"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
)

// integrity rejects patches that make tests pass by changing the tests, the
// build or the CI rather than the code.
func (v *Validators) integrity(_ context.Context, c *candidate) (task.Gate, error) {
	if c.parseErr != nil {
		return fail(fmt.Sprintf("the patch cannot be read as a unified diff: %v", c.parseErr)), nil
	}
	if len(c.files) == 0 {
		return fail("the patch changes no file"), nil
	}
	if bad := v.outOfBounds(c.files); len(bad) > 0 {
		c.refused = true
		return fail(fmt.Sprintf("the patch is refused unread (no parser saw it): %d violation(s):\n- %s", len(bad), strings.Join(bad, "\n- "))), nil
	}
	var bad []string
	for _, f := range c.files {
		bad = append(bad, v.fileViolations(c, f)...)
	}
	bad = append(bad, c.testViolations()...)
	if len(bad) > 0 {
		return fail(fmt.Sprintf("%d violation(s):\n- %s", len(bad), strings.Join(bad, "\n- "))), nil
	}
	tests := 0
	var kept []string // protected files the patch may change
	for _, f := range c.files {
		if c.isTestFile(f.Path()) {
			tests++
		}
		for _, p := range f.Paths() {
			if pp, ok := v.classifyProtected(c, p); ok {
				how := "named by the allowed paths"
				if !pp.NamedBy(v.cfg.AllowedPaths, p) && pp.Kind.Kept != nil {
					how = pp.Kind.Kept(p)
				}
				kept = append(kept, fmt.Sprintf("%s (%s)", p, how))
			}
		}
	}
	detail := fmt.Sprintf("%d file(s) changed", len(c.files))
	if tests > 0 {
		detail += fmt.Sprintf(", %d of them test files (allowed by policy); no test deleted or skipped, no assertion removed", tests)
	}
	if len(kept) > 0 {
		detail += "; protected files it may change: " + strings.Join(kept, ", ")
	}
	if tests == 0 && len(kept) == 0 {
		detail += ", no test, build or CI file touched"
	}
	return pass(detail), nil
}

func (v *Validators) fileViolations(c *candidate, f unidiff.File) []string {
	dir := c.in.Dir
	bad := v.protectedViolations(c, f)
	for _, p := range f.Paths() {
		if !v.allowed(p) {
			bad = append(bad, fmt.Sprintf("%s: outside the allowed paths (%s)", p, strings.Join(v.cfg.AllowedPaths, ", ")))
		}
	}
	if r, ok := c.driver().(RunnerConfig); ok {
		bad = append(bad, r.RunnerConfigViolations(dir, f)...)
	}
	p := f.Path()
	test := c.isTestFile(p)
	helper := !test && c.isTestHelper(p)
	if !test && !helper {
		if r, ok := c.driver().(EmbeddedTests); ok {
			bad = append(bad, r.EmbeddedTestEdits(dir, f)...)
		}
		return bad
	}
	if c.isTestData(p) && f.OldPath != "" && !c.isSource(p) {
		// Expected output: changing it changes what the tests demand.
		what := "changes"
		if f.NewPath == "" {
			what = "deletes"
		}
		bad = append(bad, fmt.Sprintf("%s: %s test data the tests compare with (expected output)", p, what))
	}
	if !helper && !v.cfg.AllowTestEdits {
		what := "edits test file"
		switch {
		case f.NewPath == "":
			what = "deletes test file"
		case f.OldPath == "":
			what = "adds test file"
		}
		bad = append(bad, fmt.Sprintf("%s: %s (test edits are not allowed for this repository)", p, what))
	}
	// What is checked even when test edits are allowed.
	if r, ok := c.driver().(TestEditRules); ok {
		bad = append(bad, r.TestEditViolations(dir, f, c.files)...)
	}
	return bad
}

// testViolations are the driver's rules on the patch as a whole: the
// tests it deletes, the code it adds to detect the tests, and the code
// it adds to single out the failing tests' values.
func (c *candidate) testViolations() []string {
	var bad []string
	d := c.driver()
	if r, ok := d.(TestDeletions); ok {
		bad = append(bad, r.DeletedTests(c.in.Dir, c.files, c.isTestFile)...)
	}
	if r, ok := d.(TestDetection); ok {
		bad = append(bad, r.DetectsTests(c.in.Dir, c.files, c.isTestFile)...)
	}
	if r, ok := d.(SpecialCasing); ok {
		bad = append(bad, r.SpecialCases(c.in.Dir, c.files, c.in.Task.Tests(), c.isTestFile)...)
	}
	return bad
}

// allowed reports whether p matches one of the allowed globs (all paths when
// there are none).
func (v *Validators) allowed(p string) bool {
	if len(v.cfg.AllowedPaths) == 0 {
		return true
	}
	for _, g := range v.cfg.AllowedPaths {
		if repoconfig.Match(g, p) {
			return true
		}
	}
	return false
}
