package offline

import (
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/all"
)

// The tests' languages: those of every registered driver, as the wiring
// gives them to the policy.

func testDrivers() []lang.Driver { return all.Drivers(config.Languages{}, 0, nil) }

var testLangs = languagesOf(testDrivers())

// mutationsIn applies the templates to one line of the file at path, as
// the policy does.
func mutationsIn(path, line string) []Mutation { return New(nil, testDrivers()).Mutations(path, line) }
