package golang

import "github.com/redfix/redfix/pkg/harness/tools/words"

// ToolWords are Go's words in the agent's tools' descriptions.
func (Driver) ToolWords() words.Words {
	return words.Words{
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
		Example:      "pricing/pricing.go",
	}
}
