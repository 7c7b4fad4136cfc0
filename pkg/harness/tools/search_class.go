package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
)

// SearchClass is the tool that finds type declarations by name.
const SearchClass = "search_class"

// SearchClassArgs are search_class's arguments.
type SearchClassArgs struct {
	Name string `json:"name" description:"The type's name, e.g. \"Parser\"."`
}

//go:embed search_class.md
var searchClassDoc string

var searchClassTool = Define(SearchClass, KindOther, searchClassDoc, (*Session).searchClass)

func (s *Session) searchClass(_ context.Context, args SearchClassArgs) (Observation, error) {
	name := strings.TrimSpace(args.Name)
	if name == "" {
		return problem("A name is required."), nil
	}
	idx, err := s.symbolIndex()
	if err != nil {
		return Observation{}, err
	}
	return s.showSymbols(idx, idx.FindTypes(name), fmt.Sprintf("type named %q", name),
		func() string { return suggest(idx.Similar(name, codeindex.KindType, 8)) }), nil
}
