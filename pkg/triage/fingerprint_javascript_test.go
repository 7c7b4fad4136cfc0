package triage

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// The JavaScript runners' reports of one run, read on two machines (their
// checkouts elsewhere, the durations and timestamps of another run): each
// failure has the same fingerprint on both, and no two failures of a
// report share one. node:test's and jest's default reports do not show
// their checkout's root, so their absolute paths stay in the report.
func TestFingerprintJSReportsStableAcrossMachines(t *testing.T) {
	t.Parallel()
	const repo = "https://github.com/acme/shop"
	times := regexp.MustCompile(`(time|timestamp|duration_ms)="[^"]*"|duration_ms [0-9.]+`)
	for _, name := range []string{"vitest.xml", "jest-junit-default.xml", "jest-junit-file.xml", "mocha-junit-reporter.xml", "node-test.xml"} {
		data, err := os.ReadFile("../report/testdata/junit/" + name)
		if err != nil {
			t.Fatal(err)
		}
		other := strings.ReplaceAll(string(data), "/home/runner/work/shop/shop/", "/srv/builds/7f3a/shop/")
		other = times.ReplaceAllString(other, `time="9.75"`)
		if other == string(data) {
			t.Fatalf("%s: the other machine's report is the same", name)
		}
		a, err := report.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		b, err := report.Parse([]byte(other))
		if err != nil {
			t.Fatal(err)
		}
		fa, fb := append(a.Failures, a.BuildErrors...), append(b.Failures, b.BuildErrors...)
		if len(fa) < 3 || len(fa) != len(fb) {
			t.Fatalf("%s: %d and %d failures", name, len(fa), len(fb))
		}
		seen := map[string]string{}
		for i := range fa {
			x, y := Fingerprint(repo, fa[i], node.Driver{}), Fingerprint(repo, fb[i], node.Driver{})
			if x != y {
				t.Errorf("%s: %s has fingerprints %s and %s on two machines:\n%+v\n%+v", name, fa[i].ID(), x, y, fa[i], fb[i])
			}
			if prev, ok := seen[x]; ok {
				t.Errorf("%s: %s and %s share a fingerprint", name, prev, fa[i].ID())
			}
			seen[x] = fa[i].ID()
		}
	}
}

// A message's colour codes and the absolute paths of JavaScript files in it
// do not change a fingerprint; the message's words do.
func TestFingerprintJSMessage(t *testing.T) {
	t.Parallel()
	const repo = "https://github.com/acme/shop"
	f := func(msg string) task.Failure {
		return task.Failure{Package: "src/cart.test.ts", Test: "cart > totals", Message: msg, Frames: []string{"src/cart.ts:3"}}
	}
	base := Fingerprint(repo, f("Cannot find module './tax' imported from /home/runner/work/shop/shop/src/cart.ts"), node.Driver{})
	for msg, same := range map[string]bool{
		"Cannot find module './tax' imported from /tmp/x/y/shop/src/cart.ts":                 true,
		"Cannot find module './tax' imported from file:///Users/me/shop/src/cart.ts":         true,
		"\x1b[31mCannot find module './tax'\x1b[39m imported from /w/shop/src/cart.ts":       true,
		"Cannot find module './rates' imported from /home/runner/work/shop/shop/src/cart.ts": false,
		"Cannot find module './tax' imported from /home/runner/work/shop/shop/lib/cart.ts":   false,
	} {
		if got := Fingerprint(repo, f(msg), node.Driver{}) == base; got != same {
			t.Errorf("%q: same fingerprint %v, want %v", msg, got, same)
		}
	}
	// Go's messages are as they were: a path in one is not a JavaScript file.
	goF := task.Failure{Package: "example.com/m/x", Test: "TestX", Message: "open /home/a/x.js: no such file"}
	goG := goF
	goG.Message = "open /home/b/x.js: no such file"
	if Fingerprint(repo, goF, node.Driver{}) == Fingerprint(repo, goG, node.Driver{}) {
		t.Error("a Go failure's paths are normalized too")
	}
}
