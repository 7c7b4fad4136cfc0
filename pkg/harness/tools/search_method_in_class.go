package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
)

// SearchMethodInClass is the tool that finds a method by its type's and its own names.
const SearchMethodInClass = "search_method_in_class"

// SearchMethodInClassArgs are search_method_in_class's arguments.
type SearchMethodInClassArgs struct {
	Name  string `json:"name" description:"The method name."`
	Class string `json:"class" description:"The receiver type's name, e.g. \"Parser\"."`
}

//go:embed search_method_in_class.md
var searchMethodInClassDoc string

var searchMethodInClassTool = Define(SearchMethodInClass, KindDefinitions, searchMethodInClassDoc, (*Session).searchMethodInClass)

func (s *Session) searchMethodInClass(_ context.Context, args SearchMethodInClassArgs) (Observation, error) {
	name := strings.TrimSpace(args.Name)
	if name == "" {
		return problem("A name is required."), nil
	}
	if strings.TrimSpace(args.Class) == "" {
		return problem("A class (the receiver type's name) is required."), nil
	}
	idx, err := s.symbolIndex()
	if err != nil {
		return Observation{}, err
	}
	methods := idx.MethodsOf(strings.TrimLeft(args.Class, "*"))
	return s.showSymbols(idx, idx.FindMethod(args.Class, name), fmt.Sprintf("method %q of type %q", name, args.Class), func() string {
		if len(methods) == 0 {
			return " That type has no methods." + suggest(idx.Similar(args.Class, codeindex.KindType, 8))
		}
		return suggest(methods)
	}), nil
}
