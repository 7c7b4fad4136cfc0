package node

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/testenv"
)

// TestSettingsReachTheRunner: a node:test suite whose test needs New
// York's time zone, and one of the driver's own defaults changed
// (FORCE_COLOR), passes only with the repository's settings.
func TestSettingsReachTheRunner(t *testing.T) {
	t.Parallel()
	ctx, d, dir := fixture(t, append(append([]string(nil), nodetest.Tally...),
		"tally: a zone's test\n\n-- test/zone.test.js --\nconst test = require('node:test');\nconst assert = require('node:assert');\n\n"+
			"test('zone', () => {\n  assert.strictEqual(new Date(0).getTimezoneOffset(), 300);\n  assert.strictEqual(process.env.FORCE_COLOR, '1');\n});\n")...)
	const zone = "test/zone.test.js::zone"
	o, err := d.Run(ctx, dir, []string{zone}, 1)
	if err != nil || len(o.Failed) != 1 {
		t.Fatalf("without the settings: %s, %v; want the test failing", o.Summary(), err)
	}
	cd, err := lang.Configure(d, testenv.Settings{Env: map[string]string{"TZ": "America/New_York", "FORCE_COLOR": "1"}, Args: []string{"--test-concurrency=1"}})
	if err != nil {
		t.Fatal(err)
	}
	o, err = cd.Run(ctx, dir, []string{zone}, 1)
	if err != nil || len(o.Failed) != 0 || len(o.Passed) != 1 {
		t.Errorf("with the settings: %s, %v; want it passing\n%s", o.Summary(), err, o.Output)
	}
	clean(t, dir)
}

// TestSettingsRefusesTheRunnersOwnOptions: an option that moves the
// report or chooses the tests is refused, naming it.
func TestSettingsRefusesTheRunnersOwnOptions(t *testing.T) {
	t.Parallel()
	for arg, want := range map[string]string{
		"--reporter=dot":            "reads the runner's report",
		"--outputFile=/tmp/x.json":  "reads the runner's report",
		"--testNamePattern=x":       "which tests run",
		"-tfoo":                     "which tests run",
		"--test-name-pattern=x":     "which tests run",
		"--watch":                   "run no test",
		"--test-reporter=spec":      "reads the runner's report",
		"--coverage.enabled=true":   "reads the runner's report",
		"--cacheDirectory=/tmp/any": "reads the runner's report",
	} {
		_, err := lang.Configure(Driver{}, testenv.Settings{Args: []string{"--runInBand", arg}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), arg) {
			t.Errorf("%s: %v; want it refused with %q", arg, err, want)
		}
	}
	if _, err := lang.Configure(Driver{}, testenv.Settings{Args: []string{"--runInBand", "--maxWorkers=2", "--pool=forks", "--timeout=5000"}}); err != nil {
		t.Errorf("plain options refused: %v", err)
	}
}
