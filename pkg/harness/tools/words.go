package tools

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
}

// goWords are Go's, and those of a language with none of its own.
var goWords = Words{
	Lang:         "Go",
	Files:        `"parser.go", "*_test.go", "pkg/**/x*.go"`,
	Types:        "Go type declarations (structs, interfaces, other named types)",
	Members:      "method",
	Class:        "type",
	Functions:    "Go functions",
	Methods:      `"Parse" or "Parser.Parse"`,
	Runner:       "",
	TestIDs:      `Test ids are "import/path.TestName", "TestName" or "TestName/subtest" (a subtest runs inside its parent test, as in CI)`,
	Suites:       `packages ("./...", "./cmd/x", an import path)`,
	Listed:       "packages",
	EditFeedback: "build, vet and gofmt findings",
}

// languageWords are the words of the languages whose drivers (by their
// names) have words of their own.
var languageWords = map[string]Words{
	"python": {
		Lang:      "Python",
		Files:     `"pricing.py", "test_*.py", "src/**/x*.py"`,
		Types:     "Python classes",
		Members:   "method",
		Class:     "class",
		Functions: "Python functions",
		Methods:   `"quote" or "Catalog.quote"`,
		Runner:    " with pytest",
		TestIDs:   `Test ids are pytest's node ids ("tests/test_x.py::test_y", "tests/test_x.py::TestC::test_y[param]") or bare test names ("test_y")`,
		Suites:    `test files and directories ("tests/test_x.py", "tests")`,
		Listed:    "files or directories",
		// As Python's description has always said, though a Python
		// file's feedback is its driver's checks (JavaScript's says so).
		EditFeedback: "build, vet and gofmt findings",
	},
	"node": {
		Lang:         "JavaScript or TypeScript",
		Files:        `"price.ts", "*.test.ts", "src/**/*.js"`,
		Types:        "JavaScript or TypeScript classes, interfaces, type aliases and enums",
		Members:      "member",
		Class:        "class",
		Functions:    "JavaScript or TypeScript functions (declarations, and arrow functions or function expressions assigned to a name)",
		Methods:      `"quote" or "Catalog.quote"`,
		Runner:       " with the repository's runner (vitest, jest, mocha or node:test)",
		TestIDs:      `Test ids are FILE::NAME: a test file's path, "::" and the test's full name, its describe blocks' titles and its own joined by " > " ("src/price.test.ts::price > applies the discount"), or the name alone where one file declares it ("price > applies the discount")`,
		Suites:       `test files and directories ("src/price.test.ts", "test")`,
		Listed:       "files or directories",
		EditFeedback: "the new findings of the driver's static checks",
	},
}

// wordsOf are the words of l's language: its driver's, by name, or Go's.
func wordsOf(l Language) Words {
	if named, ok := l.(interface{ Name() string }); ok {
		if w, ok := languageWords[named.Name()]; ok {
			return w
		}
	}
	return goWords
}
