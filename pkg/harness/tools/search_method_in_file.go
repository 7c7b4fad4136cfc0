package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
)

// SearchMethodInFile is the tool that finds a function or method by name in one file.
const SearchMethodInFile = "search_method_in_file"

// SearchMethodInFileArgs are search_method_in_file's arguments.
type SearchMethodInFileArgs struct {
	Name string `json:"name" description:"The function or method name."`
	Path string `json:"path" description:"File path relative to the repository root."`
}

//go:embed search_method_in_file.md
var searchMethodInFileDoc string

var searchMethodInFileTool = Define(SearchMethodInFile, KindDefinitions, searchMethodInFileDoc, (*Session).searchMethodInFile)

func (s *Session) searchMethodInFile(ctx context.Context, args SearchMethodInFileArgs) (Observation, error) {
	name := strings.TrimSpace(args.Name)
	if name == "" {
		return problem("A name is required."), nil
	}
	_, rel, bad := s.readText(ctx, args.Path)
	if bad != nil {
		return *bad, nil
	}
	idx, err := s.symbolIndex()
	if err != nil {
		return Observation{}, err
	}
	all := idx.FuncsInFile(rel)
	var found []codeindex.Symbol
	for _, f := range all {
		if f.Name == name || f.QualifiedName() == name {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		for _, f := range all {
			if strings.EqualFold(f.Name, name) {
				found = append(found, f)
			}
		}
	}
	return s.showSymbols(idx, found, fmt.Sprintf("function or method named %q in %s", name, rel), func() string {
		if len(all) == 0 {
			return " The file declares none of the " + WordsOf(s.env.Lang).Functions + "."
		}
		return suggest(all)
	}), nil
}
