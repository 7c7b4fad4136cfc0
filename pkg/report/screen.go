package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"

	"gotest.tools/gotestsum/testjson"
)

// Screen is what an ingest API needs to know of a report before it stores
// it: its format, and that Parse would not refuse it. A go test -json
// report is not parsed: Screen reads lines until the first test event and
// only splits the rest into lines (Parse refuses a line longer than its
// scanner's limit), so it refuses exactly what Parse refuses with the same
// reasons, at a fraction of the cost; parsed is false and res holds only
// the format. JUnit XML has no cheaper check than its parse: it is parsed,
// and res is Parse's result (parsed true).
func Screen(data []byte) (res Result, parsed bool, err error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		if err := screenGoTestJSON(trimmed); err != nil {
			return Result{}, false, err
		}
		return Result{Format: "go-test-json"}, false, nil
	}
	res, err = Parse(data)
	return res, err == nil, err
}

// screenGoTestJSON fails where ParseGoTestJSON fails: a line too long for
// its scanner, or no event that names a package. Lines are found in place;
// a report with a line near the scanner's limit is screened by a scanner
// like Parse's, so that the limit is met exactly where Parse meets it.
func screenGoTestJSON(data []byte) error {
	found := false
	for rest := data; len(rest) > 0; {
		line, next, _ := bytes.Cut(rest, []byte{'\n'})
		if len(line) >= bufio.MaxScanTokenSize-1 {
			return screenScanned(data)
		}
		found = found || isEvent(bytes.TrimSuffix(line, []byte{'\r'}))
		rest = next
	}
	if !found {
		return errNoEvents
	}
	return nil
}

var errNoEvents = fmt.Errorf("parse go test -json: no test events (is this `go test -json` output?)")

// screenScanned is screenGoTestJSON through a bufio.Scanner.
func screenScanned(data []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	found := false
	for sc.Scan() {
		found = found || isEvent(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("parse go test -json: failed to scan test output: %w", err)
	}
	if !found {
		return errNoEvents
	}
	return nil
}

// isEvent reports whether raw is an event Parse keeps a package for (the
// collector's Event); a line that is not an event is build output, kept as
// text by Parse.
func isEvent(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var e testjson.TestEvent
	if json.Unmarshal(raw, &e) != nil {
		return false
	}
	return e.Package != "" && e.Action != testjson.ActionBuild && e.Elapsed >= 0
}
