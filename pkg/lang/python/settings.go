package python

import (
	"strings"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/testenv"
)

// refusedOptions are pytest's options a repository may not add, and why:
// redfix sets them, or they change which tests run, where the report is
// written, or whether pytest runs tests at all.
var refusedOptions = testenv.Refuse(
	testenv.Refusal{Why: "redfix sets it: it reads pytest's JUnit report from where it asks for it, with node ids relative to the checkout",
		Options: []string{"--junitxml", "--junit-xml", "--junit-prefix", "--rootdir", "-o", "--override-ini", "-c", "--config-file", "--confcutdir", "--pyargs"}},
	testenv.Refusal{Why: "it chooses which tests run, or stops before all have: which tests run is redfix's to say",
		Options: []string{"-k", "--deselect", "-x", "--exitfirst", "--maxfail", "--lf", "--last-failed", "--ff", "--failed-first", "--nf", "--new-first", "--sw", "--stepwise", "--sw-skip", "--stepwise-skip", "--co", "--collect-only", "--collectonly"}},
	testenv.Refusal{Why: "pytest would run no test",
		Options: []string{"-h", "--help", "-V", "--version", "--fixtures", "--funcargs", "--fixtures-per-test", "--markers", "--setup-only", "--setup-plan"}},
	testenv.Refusal{Why: "it waits for a person",
		Options: []string{"--pdb", "--trace", "--pdbcls"}},
)

// WithTests is d running every pytest (and coverage) invocation with s's
// variables and options (after redfix's own, before the tests), and
// setting up s's dependency groups (see prepare). "-p" may only disable a
// plugin ("-pno:randomly"), and not redfix's.
func (d Driver) WithTests(s testenv.Settings) (lang.Driver, error) {
	if err := testenv.CheckOptions(s.Args, refusedOptions); err != nil {
		return nil, err
	}
	for _, a := range s.Args {
		if a == "-p" || strings.HasPrefix(a, "-p") && !strings.HasPrefix(a, "-pno:") || strings.HasPrefix(a, "-pno:"+pluginModule) || a == "-pno:junitxml" {
			return nil, errPlugin(a)
		}
	}
	d.TestEnv = s.Environ()
	d.TestArgs = append([]string(nil), s.Args...)
	d.Groups = append([]string(nil), s.DependencyGroups...)
	return d, nil
}

type errPlugin string

func (e errPlugin) Error() string {
	return `"` + string(e) + `": "-p" may only disable a plugin, its value joined ("-pno:randomly"), and not the JUnit report redfix reads`
}
