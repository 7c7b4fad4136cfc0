package tools

import (
	"context"
	"fmt"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/testrun"
)

// Unknown is the Language of a checkout no driver knows, for the tools
// that only read it (the tool command's read_file on any repository): it
// runs, names, checks and indexes nothing, each refused with why (the
// error choosing a driver gave, lang.ErrNoDriver with its reason). It is
// no default language: nothing of any language is assumed.
func Unknown(why error) Language { return unknown{why: why} }

type unknown struct{ why error }

func (u unknown) refuse(what string) error { return fmt.Errorf("%s: %w", what, u.why) }

func (u unknown) Run(context.Context, string, []string, int) (testrun.Outcome, error) {
	return testrun.Outcome{}, u.refuse("run tests")
}

func (u unknown) RunPackages(context.Context, string, []string) (testrun.Outcome, error) {
	return testrun.Outcome{}, u.refuse("run tests")
}

func (u unknown) List(context.Context, string, []string) ([]testrun.Listed, error) {
	return nil, u.refuse("list tests")
}

func (u unknown) Localize(context.Context, string, []string, int) (testrun.Spectra, error) {
	return testrun.Spectra{}, u.refuse("localize")
}

func (u unknown) Resolve(_, id string) (testrun.Target, error) {
	return testrun.Target{}, u.refuse("name the test " + id)
}

func (u unknown) Check(context.Context, string, []string) ([]findings.Finding, error) {
	return nil, nil // no language, no checks: an edit is held to none
}

func (unknown) IsSource(string) bool   { return false }
func (unknown) IsTestFile(string) bool { return false }

func (u unknown) Index(string) (*codeindex.Index, error) {
	return nil, u.refuse("index the declarations")
}
