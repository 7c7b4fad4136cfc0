package golang

import (
	"strings"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/testenv"
)

// buildFlags are the go test options a repository may add that change how
// its packages build; testFlags those that change how its tests run. The
// rest (-run, -count, -json, -o, -exec, -cover…, profiles) are redfix's:
// they choose the tests, shape the report it reads, or write files.
var (
	buildFlags = []string{"-tags", "-ldflags", "-gcflags", "-race", "-asan", "-msan"}
	testFlags  = []string{"-short", "-timeout", "-cpu", "-parallel", "-shuffle", "-vet"}
)

// WithTests is d running every go command on the repository's tests with
// s's variables and options (s.DependencyGroups means nothing to Go). An
// option must be one of buildFlags or testFlags, its value joined
// ("-tags=integration").
func (d Driver) WithTests(s testenv.Settings) (lang.Driver, error) {
	if err := testenv.CheckAllowed(s.Args, append(append([]string(nil), buildFlags...), testFlags...)); err != nil {
		return nil, err
	}
	d.Tests.Env = s.Environ()
	d.Tests.Args = append([]string(nil), s.Args...)
	return d, nil
}

// coverArgs are the runner's options as coverage takes them: the build
// options for go test -c (but the sanitizers, which coverage's set mode
// does not build with), the test options for the test binary (-test.short).
func (r Runner) coverArgs() (build, run []string) {
	for _, a := range r.Args {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "-tags", "-ldflags", "-gcflags":
			build = append(build, a)
		case "-short", "-timeout", "-cpu", "-parallel":
			run = append(run, "-test."+strings.TrimPrefix(a, "-"))
		}
	}
	return build, run
}
