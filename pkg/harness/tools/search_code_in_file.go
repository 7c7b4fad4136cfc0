package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
)

// SearchCodeInFile is the tool that searches one file's text.
const SearchCodeInFile = "search_code_in_file"

// SearchCodeInFileArgs are search_code_in_file's arguments.
type SearchCodeInFileArgs struct {
	Query string `json:"query" description:"The text or regular expression to find."`
	Regex bool   `json:"regex,omitempty" description:"Treat query as a regular expression."`
	Path  string `json:"path" description:"File path relative to the repository root."`
}

//go:embed search_code_in_file.md
var searchCodeInFileDoc string

var searchCodeInFileTool = Define(SearchCodeInFile, KindOther, searchCodeInFileDoc, (*Session).searchCodeInFile)

// searchFileCap is how many matches search_code_in_file shows.
const searchFileCap = 100

func (s *Session) searchCodeInFile(ctx context.Context, args SearchCodeInFileArgs) (Observation, error) {
	if args.Query == "" {
		return problem("A query is required."), nil
	}
	if _, _, bad := s.readText(ctx, args.Path); bad != nil {
		return *bad, nil
	}
	_, rel, _ := s.resolve(args.Path)
	match, err := matcher(args.Query, args.Regex, false)
	if err != nil {
		return problem("The regular expression %q is not valid (RE2 syntax): %v.", args.Query, err), nil
	}
	ns, ts := s.grepFile(rel, match)
	note := ""
	if len(ns) == 0 {
		fold, _ := matcher(args.Query, args.Regex, true)
		if ns, ts = s.grepFile(rel, fold); len(ns) > 0 {
			note = " (no exact match; these match ignoring case)"
		}
	}
	if len(ns) == 0 {
		return Observation{Content: fmt.Sprintf("No match for %q in %s.", args.Query, rel), Search: &SearchResult{}}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s for %q in %s%s:\n", plural(len(ns), "match", "matches"), args.Query, rel, note)
	res := &SearchResult{}
	for i, n := range ns {
		if i == searchFileCap {
			fmt.Fprintf(&b, "[… %d more; narrow the query]\n", len(ns)-searchFileCap)
			break
		}
		from := b.Len()
		fmt.Fprintf(&b, "%s:%d: %s\n", rel, n, ts[i])
		res.add(SearchHit{File: rel, Line: n, Text: ts[i]}, from, b.Len())
	}
	return Observation{Content: b.String(), Search: res}, nil
}
