// Package bisect finds the commit that broke some tests, or a package's
// build, on a failing commit's first-parent history.
//
// Test runs are noisy evidence: a test may fail before its culprit for a
// transient reason. NoisySearch keeps a posterior over which commit is the
// first failing one, jointly with the test's flake rate, and runs next the
// commit whose run is expected to tell most; Bisector runs it on a git
// repository, in worktrees of its own when it runs commits in parallel, and
// keeps the runs in a RunCache for later searches. A build is
// deterministic: BuildBisector is a plain binary search, one build a
// commit.
//
// The package declares what it needs from its callers (Language, Runner,
// Builder, RunCache, and TestDeclarer, which a language may be); the
// repository's language driver, triage's runner and the store satisfy
// them. There is no default language: the caller chooses the driver from
// the checkout.
package bisect
