package harness

// languageSpecs are the tools' descriptions as a language's driver (by its
// name) changes them: how its tests are named, what its declarations are.
// A language not here gets Go's.
var languageSpecs = map[string]map[string]string{
	"python": {
		ActFindFile:            "Find files by name or glob (e.g. \"pricing.py\", \"test_*.py\", \"src/**/x*.py\") among the repository's files.",
		ActSearchClass:         "Find Python classes by name: location, declaration and method list.",
		ActSearchMethod:        "Find Python functions and methods by name (\"quote\" or \"Catalog.quote\"): location, signature and body.",
		ActSearchMethodInFile:  "Find a Python function or method by name within one file: location, signature and body.",
		ActSearchMethodInClass: "Find a method of a Python class by the class's and the method's names: location, signature and body.",
		ActRunTests: "Run tests with pytest and report what passed and what failed, with failure messages and trimmed output. Without tests, runs the task's failing tests. " +
			"Test ids are pytest's node ids (\"tests/test_x.py::test_y\", \"tests/test_x.py::TestC::test_y[param]\") or bare test names (\"test_y\"); " +
			"test files and directories (\"tests/test_x.py\", \"tests\") run all their tests. With list, names the tests of files or directories without running them; " +
			"with localize, ranks the lines most likely at fault.",
	},
	"node": {
		ActFindFile:            "Find files by name or glob (e.g. \"price.ts\", \"*.test.ts\", \"src/**/*.js\") among the repository's files.",
		ActSearchClass:         "Find JavaScript or TypeScript classes, interfaces, type aliases and enums by name: location, declaration and member list.",
		ActSearchMethod:        "Find JavaScript or TypeScript functions (declarations, and arrow functions or function expressions assigned to a name) and methods by name (\"quote\" or \"Catalog.quote\"): location, signature and body.",
		ActSearchMethodInFile:  "Find a JavaScript or TypeScript function or method by name within one file: location, signature and body.",
		ActSearchMethodInClass: "Find a method of a JavaScript or TypeScript class by the class's and the method's names: location, signature and body.",
		ActRunTests: "Run tests with the repository's runner (vitest, jest, mocha or node:test) and report what passed and what failed, with failure messages and trimmed output. Without tests, runs the task's failing tests. " +
			"Test ids are a test file's path, \"::\" and the test's full name, its describe blocks' titles and its own joined by \" > \" (\"src/price.test.ts::price > applies the discount\"); " +
			"test files and directories (\"src/price.test.ts\", \"test\") run all their tests. With list, names the tests of files or directories without running them; " +
			"with localize, ranks the lines most likely at fault.",
		ActEdit: "Edit one file. Give either SEARCH/REPLACE blocks, applied as written, or natural-language instructions, which a patcher turns into blocks. " +
			"Each SEARCH must copy existing lines exactly and match once; an empty SEARCH appends (or creates the file). Block format:\n" + BlockFormat +
			"\nAfter the edit, the file's diff and the new findings of the driver's static checks are returned.",
	},
}

// specs are the tools as the episode's policy sees them: Specs, with the
// descriptions of the harness's language.
func (h *Harness) specs() []ToolSpec {
	specs := Specs()
	named, ok := h.lang.(interface{ Name() string })
	if !ok {
		return specs
	}
	for i := range specs {
		if d, ok := languageSpecs[named.Name()][specs[i].Name]; ok {
			specs[i].Description = d
		}
	}
	return specs
}
