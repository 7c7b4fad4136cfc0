package tools

import "github.com/redfix/redfix/pkg/harness/tools/words"

// Words are what the tools' descriptions say that depends on the
// repository's language (see package words, which drivers import to give
// theirs).
type Words = words.Words

// Worded is a language driver with words of its own for the tools'
// descriptions; the others are described in neutralWords.
type Worded interface {
	ToolWords() Words
}

// neutralWords describe the tools without a language: for a driver with no
// words of its own, and the tools listed outside any repository.
var neutralWords = Words{
	Lang:         "declared",
	Files:        `"README.md", "*.yaml", "src/**/x*"`,
	Types:        "type and class declarations",
	Members:      "member",
	Class:        "type",
	Functions:    "functions",
	Methods:      `"parse" or "Parser.parse"`,
	Runner:       " with the repository's language driver",
	TestIDs:      `Test ids are named as the repository's test reports name them`,
	Suites:       `packages, test files and directories`,
	Listed:       "packages, files or directories",
	EditFeedback: "the new findings of the language driver's static checks",
	Example:      "src/calc",
}

// WordsOf are the words of l's language: its driver's, or neutral ones
// (nil: neutral).
func WordsOf(l Language) Words {
	if w, ok := l.(Worded); ok {
		return w.ToolWords()
	}
	return neutralWords
}
