package node

import "github.com/redfix/redfix/pkg/harness/tools/words"

// ToolWords are JavaScript's and TypeScript's words in the agent's tools'
// descriptions.
func (Driver) ToolWords() words.Words {
	return words.Words{
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
		Example:      "src/price.ts",
	}
}
