package golang

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"gotest.tools/gotestsum/testjson"

	"github.com/redfix/redfix/pkg/report"
)

// formatName is go test -json's format as a report.Result names it.
const formatName = "go-test-json"

// Format is go test -json read as a report format (report.Format, and a
// report.Screener): a report that starts with a JSON object.
type Format struct{}

func init() { report.RegisterFormat(Format{}) }

// Name is "go-test-json".
func (Format) Name() string { return formatName }

// Describe is "go test -json".
func (Format) Describe() string { return "go test -json" }

// Sniff claims a report that starts with a JSON object.
func (Format) Sniff(data []byte) bool { return len(data) > 0 && data[0] == '{' }

// Parse is ParseGoTestJSON.
func (Format) Parse(r io.Reader) (report.Result, error) { return ParseGoTestJSON(r) }

// Screen fails where ParseGoTestJSON fails: a line too long for its
// scanner, or no event that names a package. Lines are found in place; a
// report with a line near the scanner's limit is screened by a scanner like
// the parser's, so that the limit is met exactly where the parser meets it.
func (Format) Screen(data []byte) error {
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

// screenScanned is Screen through a bufio.Scanner.
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

// isEvent reports whether raw is an event the parser keeps a package for
// (the collector's Event); a line that is not an event is build output,
// kept as text by the parser.
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
