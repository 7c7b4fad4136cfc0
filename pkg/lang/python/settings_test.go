package python

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/testenv"
)

// tzRepo's test passes only in New York's time zone, as a suite whose CI
// sets TZ does; its doctest runs only with --doctest-modules.
var tzRepo = map[string]string{
	"pyproject.toml": "[project]\nname = \"when\"\n",
	"when.py": `import time


def zone():
    """The local zone's name.

    >>> 1 + 1
    2
    """
    return time.strftime("%Z", time.localtime(0))
`,
	"test_when.py": "import when\n\n\ndef test_new_york():\n    assert when.zone() == \"EST\", when.zone()\n",
}

// TestSettingsReachEveryRun: a repository's variables and options reach
// the runs of its tests through the one seam (lang.Configure): without
// them the test fails (UTC) and the doctest is not collected; with them it
// passes, in Run, RunPackages and List alike.
func TestSettingsReachEveryRun(t *testing.T) {
	t.Parallel()
	ctx, d := confined(t), pythonDriver(t)
	dir := repo(t, tzRepo)
	const test = "test_when.py::test_new_york"
	if o := mustRun(t, ctx, d, dir, 1, test); len(o.Failed) != 1 || !strings.Contains(o.Failed[0].Message, "UTC") {
		t.Fatalf("without the settings: %+v; want the test failing in UTC", o)
	}
	s := testenv.Settings{Env: map[string]string{"TZ": "America/New_York"}, Args: []string{"--doctest-modules"}}
	cd, err := lang.Configure(d, s)
	if err != nil {
		t.Fatal(err)
	}
	o, err := cd.Run(ctx, dir, []string{test}, 2)
	if err != nil || len(o.Failed) > 0 || !contains(o.Passed, test) {
		t.Fatalf("with TZ=America/New_York: %+v, %v; want it passing", o, err)
	}
	o, err = cd.RunPackages(ctx, dir, []string{"."})
	if err != nil || len(o.Failed) > 0 || !contains(o.Passed, "when.py::when.zone") {
		t.Errorf("the whole suite with the settings: passed %q, failed %q, %v; want the test and the doctest passing", o.Passed, ids(o.Failed), err)
	}
	if d.TestEnv != nil {
		t.Error("Configure changed the driver it was given")
	}
}

// TestSettingsRefusesWhatRedfixSets: an option that moves the report,
// chooses the tests or turns redfix's plugin off is refused, naming it.
func TestSettingsRefusesWhatRedfixSets(t *testing.T) {
	t.Parallel()
	for arg, want := range map[string]string{
		"--junitxml=/tmp/x.xml":         "reads pytest's JUnit report",
		"-kfoo":                         "which tests run is redfix's",
		"-x":                            "which tests run is redfix's",
		"--rootdir=/":                   "redfix sets it",
		"--co":                          "which tests run",
		"-pno:" + pluginModule:          `"-p" may only disable a plugin`,
		"-pxdist":                       `"-p" may only disable a plugin`,
		"--override-ini=junit_family=x": "redfix sets it",
	} {
		_, err := lang.Configure(Driver{}, testenv.Settings{Args: []string{"--doctest-modules", arg}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), arg) {
			t.Errorf("%s: %v; want it refused with %q", arg, err, want)
		}
	}
	if _, err := lang.Configure(Driver{}, testenv.Settings{Args: []string{"-pno:randomly", "--import-mode=importlib", "--strict-markers"}}); err != nil {
		t.Errorf("plain options refused: %v", err)
	}
}
