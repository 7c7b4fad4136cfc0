package validators

import "github.com/redfix/redfix/pkg/unidiff"

// candidate reads the input's patch.
func (v *Validators) candidate(in Input) *candidate {
	c := &candidate{in: in, lang: in.Lang}
	c.files, c.parseErr = unidiff.Parse(in.Patch)
	if c.parseErr != nil {
		c.files = nil // the gates judge a patch that cannot be read whole by its error alone
	}
	return c
}

// driver is the candidate's language driver.
func (c *candidate) driver() Language { return c.lang }

// isTestFile reports a file the integrity gate guards as a test: the
// driver's own answer (TestGuard), else its test files and its test data
// (fixtures and snapshots outside tests/ are what the tests compare with).
func (c *candidate) isTestFile(p string) bool {
	if g, ok := c.driver().(TestGuard); ok {
		return g.GuardsAsTest(p)
	}
	return c.driver().IsTestFile(p) || c.driver().IsTestData(p)
}

// isTestData reports a file the tests read or compare with.
func (c *candidate) isTestData(p string) bool { return c.driver().IsTestData(p) }

// isSource reports a file of the language's code (a test file that is
// code may be edited when the policy allows; test data may not).
func (c *candidate) isSource(p string) bool { return c.driver().IsSource(p) }

// isTestHelper reports a file that serves the tests without being one.
func (c *candidate) isTestHelper(p string) bool {
	h, ok := c.driver().(TestHelpers)
	return ok && h.IsTestHelper(c.in.Dir, p)
}

// testTool names the test command in the gates' evidence: the checkout's
// runner when the driver names it, else the language's tests.
func (c *candidate) testTool() string {
	if r, ok := c.driver().(RunnerNamer); ok {
		if name := r.Runner(c.in.Dir); name != "" {
			return name
		}
	}
	return c.driver().Name() + " tests"
}
