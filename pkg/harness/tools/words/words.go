// Package words is the vocabulary a language driver describes the agent's
// tools in: how its tests are named and run, what its declarations are. A
// driver gives its words through tools.Worded; this package imports
// nothing, so that a driver needs nothing else of the tools to give them.
package words

// Words are what the tools' descriptions say that depends on the
// repository's language: how its tests are named and run, what its
// declarations are. The descriptions' templates use them by field name.
type Words struct {
	// Lang names the language: "Go".
	Lang string
	// Files are examples of file names and globs, quoted.
	Files string
	// Types are the declarations search_class finds; Members what it lists
	// of one; Class what a method belongs to.
	Types, Members, Class string
	// Functions are what search_method finds; Methods examples of names,
	// quoted.
	Functions, Methods string
	// Runner says how the tests run (empty, or " with ..."); TestIDs how a
	// test is named; Suites what else run_tests takes, running all its
	// tests; Listed what it lists the tests of.
	Runner, TestIDs, Suites, Listed string
	// EditFeedback is what an edit returns besides the file's diff.
	EditFeedback string
	// Example is a source file's path, for the examples the agent is
	// shown ("pricing/pricing.go").
	Example string
}
