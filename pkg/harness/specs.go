package harness

// ToolSpec describes a tool to a policy (an LLM's function definition).
type ToolSpec struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"` // a JSON Schema object
}

// Specs describes the fifteen tools, in the order of the action constants,
// with JSON-Schema parameters matching the argument structs.
func Specs() []ToolSpec {
	return []ToolSpec{
		{
			Name:        ActExit,
			Description: "End the episode. Give a short summary of the fix (what was wrong, what changed) or of why no fix was found.",
			Parameters:  object(props{"summary": str("What was wrong and what you changed, or why you stop without a fix.")}, "summary"),
		},
		{
			Name:        ActGetDiffDetails,
			Description: "Show a commit: message, author, changed files and diff. Without a commit, shows the commit that bisection blamed for the failure.",
			Parameters:  object(props{"commit": str("A commit hash or revision; defaults to the blamed commit.")}),
		},
		{
			Name:        ActGetTaskDetails,
			Description: "Show the task: the failing tests with their messages, trimmed output and stack frames, flakiness evidence, and the bisection result.",
			Parameters:  object(props{}),
		},
		{
			Name:        ActReadDirectory,
			Description: "List a directory's entries (directories end with /). The path is relative to the repository root; empty means the root.",
			Parameters:  object(props{"path": str("Directory path relative to the repository root.")}),
		},
		{
			Name:        ActReadFile,
			Description: "Read a file with line numbers. Long files are cut; ask for a range with start_line and end_line (1-based, inclusive).",
			Parameters: object(props{
				"path":       str("File path relative to the repository root."),
				"start_line": integer("First line to show (1-based); 0 means the start."),
				"end_line":   integer("Last line to show (inclusive); 0 means the end."),
			}, "path"),
		},
		{
			Name:        ActFindFile,
			Description: "Find files by name or glob (e.g. \"parser.go\", \"*_test.go\", \"pkg/**/x*.go\") among the repository's files.",
			Parameters:  object(props{"pattern": str("A file name, part of one, or a glob.")}, "pattern"),
		},
		{
			Name:        ActGoToLine,
			Description: "Show 50 numbered lines of a file around a line.",
			Parameters: object(props{
				"path": str("File path relative to the repository root."),
				"line": integer("The line to center on (1-based)."),
			}, "path", "line"),
		},
		{
			Name:        ActSearchCode,
			Description: "Search the repository's text. Literal by default; set regex for a regular expression (RE2 syntax). Results are grouped by file, non-test files first, and capped.",
			Parameters: object(props{
				"query": str("The text or regular expression to find."),
				"regex": boolean("Treat query as a regular expression."),
			}, "query"),
		},
		{
			Name:        ActSearchCodeInFile,
			Description: "Search one file's text, literal by default or regex; shows every matching line with its number.",
			Parameters: object(props{
				"query": str("The text or regular expression to find."),
				"regex": boolean("Treat query as a regular expression."),
				"path":  str("File path relative to the repository root."),
			}, "query", "path"),
		},
		{
			Name:        ActSearchClass,
			Description: "Find Go type declarations (structs, interfaces, other named types) by name: location, declaration and method list.",
			Parameters:  object(props{"name": str("The type's name, e.g. \"Parser\".")}, "name"),
		},
		{
			Name:        ActSearchMethod,
			Description: "Find Go functions and methods by name (\"Parse\" or \"Parser.Parse\"): location, signature and body.",
			Parameters:  object(props{"name": str("The function or method name, optionally Type.Method.")}, "name"),
		},
		{
			Name:        ActSearchMethodInFile,
			Description: "Find a Go function or method by name within one file: location, signature and body.",
			Parameters: object(props{
				"name": str("The function or method name."),
				"path": str("File path relative to the repository root."),
			}, "name", "path"),
		},
		{
			Name:        ActSearchMethodInClass,
			Description: "Find a method of a Go type by the type's and the method's names: location, signature and body.",
			Parameters: object(props{
				"name":  str("The method name."),
				"class": str("The receiver type's name, e.g. \"Parser\"."),
			}, "name", "class"),
		},
		{
			Name:        ActRunTests,
			Description: "Run tests and report what passed and what failed, with failure messages and trimmed output. Without tests, runs the task's failing tests. Test ids are \"import/path.TestName\", \"TestName\" or \"TestName/subtest\" (a subtest runs inside its parent test, as in CI); packages (\"./...\", \"./cmd/x\", an import path) run all their tests. With list, names the tests of packages without running them; with localize, ranks the lines most likely at fault.",
			Parameters: object(props{
				"tests": map[string]any{
					"type":        "array",
					"items":       map[string]any{"type": "string"},
					"description": "Test ids or packages to run; defaults to the task's failing tests.",
				},
				"list": map[string]any{
					"type":        "boolean",
					"description": "List the tests of the named packages (default: the failing tests' packages) instead of running them.",
				},
				"localize": map[string]any{
					"type":        "boolean",
					"description": "Instead of results, rank the lines the failing tests (default: the task's) run, by spectrum-based fault localization over their coverage and that of the passing tests next to them.",
				},
			}),
		},
		{
			Name: ActEdit,
			Description: "Edit one file. Give either SEARCH/REPLACE blocks, applied as written, or natural-language instructions, which a patcher turns into blocks. " +
				"Each SEARCH must copy existing lines exactly and match once; an empty SEARCH appends (or creates the file). Block format:\n" + BlockFormat +
				"\nAfter the edit, the file's diff and build, vet and gofmt findings are returned.",
			Parameters: object(props{
				"path":         str("File path relative to the repository root."),
				"instructions": str("What to change, in words (used when blocks are not given)."),
				"blocks":       str("One or more SEARCH/REPLACE blocks."),
			}, "path"),
		},
	}
}

type props = map[string]any

func object(p props, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": p, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func integer(desc string) map[string]any {
	return map[string]any{"type": "integer", "description": desc}
}

func boolean(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}
