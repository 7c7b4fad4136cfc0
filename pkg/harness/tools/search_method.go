package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
)

// SearchMethod is the tool that finds functions and methods by name.
const SearchMethod = "search_method"

// SearchMethodArgs are search_method's arguments.
type SearchMethodArgs struct {
	Name string `json:"name" description:"The function or method name, optionally Type.Method."`
}

//go:embed search_method.md
var searchMethodDoc string

var searchMethodTool = Define(SearchMethod, KindDefinitions, searchMethodDoc, (*Session).searchMethod)

func (s *Session) searchMethod(_ context.Context, args SearchMethodArgs) (Observation, error) {
	name := strings.TrimSpace(args.Name)
	if name == "" {
		return problem("A name is required."), nil
	}
	idx, err := s.symbolIndex()
	if err != nil {
		return Observation{}, err
	}
	return s.showSymbols(idx, idx.FindFuncs(name), fmt.Sprintf("function or method named %q", name),
		func() string { return suggest(idx.Similar(name, codeindex.KindFunc, 8)) }), nil
}
