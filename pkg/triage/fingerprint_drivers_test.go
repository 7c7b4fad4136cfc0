package triage

import (
	"testing"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/task"
)

// The fingerprints of failures as triage computed them before their
// languages' rules moved into the drivers: each driver, alone or among the
// others, gives the same.
var (
	goFailure = task.Failure{Package: "example.com/calc", Test: "TestAdd/neg",
		Message: "calc_test.go:12: Add(1, 2) = -1, want 3 at /tmp/x/y.go 0xc000123 2026-01-02T03:04:05Z",
		Frames:  []string{"/home/ci/calc/calc_test.go:12", "/home/ci/calc/calc.go:7"},
		Output:  "panic: boom\n\ngoroutine 7 [running]:\nexample.com/calc.Add(...)\n\t/home/ci/calc/calc.go:7 +0x1d\n"}
	pythonFailure = task.Failure{Package: "tests/test_calc.py", Test: "TestAdd::test_sum[1-2]",
		Message: "assert 3 == 4 in /home/ci/calc/tests/test_calc.py", Frames: []string{"tests/test_calc.py:9", "calc/core.py:3"}}
	jsFileFailure = task.Failure{Package: "/home/runner/work/shop/shop/src/cart.test.ts", Test: "cart > totals",
		Message: "\x1b[31mCannot find module './tax'\x1b[39m imported from file:///home/runner/work/shop/shop/src/cart.ts (/w/a/b.mjs)",
		Frames:  []string{"src/cart.ts:3"}}
	jsFrameFailure = task.Failure{Package: "cart", Test: "totals", Message: "expected 1 to be 2 at /home/x/shop/src/a.jsx:3",
		Frames: []string{"/home/x/shop/src/a.jsx:3"}}
)

const fingerprintRepo = "https://github.com/acme/shop"

// allDrivers are the drivers in the order the configuration lists them.
func allDrivers() []lang.Driver {
	return lang.New(golang.Driver{}, python.Driver{}, node.Driver{}).All()
}

func checkFingerprint(t *testing.T, f task.Failure, want string, drivers ...lang.Driver) {
	t.Helper()
	if got := Fingerprint(fingerprintRepo, f, drivers...); got != want {
		t.Errorf("%s: fingerprint %s, want %s (as before)", f.ID(), got, want)
	}
}

func TestFingerprintOfGoFailuresAsBefore(t *testing.T) {
	const want = "d8ec61929866f6a4c0fef70168032887"
	checkFingerprint(t, goFailure, want, golang.Driver{})
	checkFingerprint(t, goFailure, want, allDrivers()...)
	checkFingerprint(t, goFailure, want)
}

func TestFingerprintOfPythonFailuresAsBefore(t *testing.T) {
	const want = "4ecbf90c094ffaf5b11105696e6c354c"
	checkFingerprint(t, pythonFailure, want, python.Driver{})
	checkFingerprint(t, pythonFailure, want, allDrivers()...)
	checkFingerprint(t, pythonFailure, want)
}

// A JavaScript failure's paths and colours are taken out by the node
// driver: without it they stay in, and the fingerprint differs.
func TestFingerprintOfJSFailuresAsBefore(t *testing.T) {
	for _, c := range []struct {
		f    task.Failure
		want string
	}{
		{jsFileFailure, "addaaf186995d008c3bacfa25cdf23b9"},
		{jsFrameFailure, "39e2af00a4535ae3401748a88d0f7e46"},
	} {
		checkFingerprint(t, c.f, c.want, node.Driver{})
		checkFingerprint(t, c.f, c.want, allDrivers()...)
		if Fingerprint(fingerprintRepo, c.f, golang.Driver{}, python.Driver{}) == c.want {
			t.Errorf("%s: normalised without the node driver", c.f.ID())
		}
	}
}

// Grouping takes the drivers too: two machines' runs of one JavaScript
// failure are one group with the node driver, two without.
func TestGroupFailuresNormalisedByTheDrivers(t *testing.T) {
	other := jsFileFailure
	other.Package = "/srv/builds/7f3a/shop/src/cart.test.ts"
	other.Message = "Cannot find module './tax' imported from /srv/builds/7f3a/shop/src/cart.ts (/w/a/b.mjs)"
	fs := []task.Failure{jsFileFailure, other}
	if n := len(GroupFailures(fingerprintRepo, fs, allDrivers()...)); n != 1 {
		t.Errorf("%d groups with the drivers, want 1", n)
	}
	if n := len(GroupFailures(fingerprintRepo, fs)); n != 2 {
		t.Errorf("%d groups without them, want 2", n)
	}
}
