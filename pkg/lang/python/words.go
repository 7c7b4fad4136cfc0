package python

import "github.com/redfix/redfix/pkg/harness/tools/words"

// ToolWords are Python's words in the agent's tools' descriptions.
func (Driver) ToolWords() words.Words {
	return words.Words{
		Lang:         "Python",
		Files:        `"pricing.py", "test_*.py", "src/**/x*.py"`,
		Types:        "Python classes",
		Members:      "method",
		Class:        "class",
		Functions:    "Python functions",
		Methods:      `"quote" or "Catalog.quote"`,
		Runner:       " with pytest",
		TestIDs:      `Test ids are pytest's node ids ("tests/test_x.py::test_y", "tests/test_x.py::TestC::test_y[param]", a doctest's "src/pkg/mod.py::pkg.mod.func") or bare test names ("test_y")`,
		Suites:       `test files and directories ("tests/test_x.py", "tests")`,
		Listed:       "files or directories",
		EditFeedback: "the new findings of compile() and pyflakes",
		Example:      "src/shop/pricing.py",
	}
}
