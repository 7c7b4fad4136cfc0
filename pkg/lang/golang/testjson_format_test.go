package golang

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/report"
)

// The driver registers go test -json as a report format: report.Parse and
// report.Screen read a stream of its events through it, named
// "go-test-json", and a report in no format names it among those wanted.
func TestRegistersGoTestJSONFormat(t *testing.T) {
	stream := `{"Action":"run","Package":"example.com/calc","Test":"TestSum"}
{"Action":"output","Package":"example.com/calc","Test":"TestSum","Output":"    calc_test.go:9: got 3, want 4\n"}
{"Action":"fail","Package":"example.com/calc","Test":"TestSum","Elapsed":0.01}
{"Action":"fail","Package":"example.com/calc","Elapsed":0.02}
`
	res, err := report.Parse([]byte(stream))
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != "go-test-json" || len(res.Failures) != 1 || res.Failures[0].ID() != "example.com/calc.TestSum" ||
		res.Failures[0].Message != "got 3, want 4" {
		t.Fatalf("report.Parse = %+v", res)
	}
	direct, err := ParseGoTestJSON(strings.NewReader(stream))
	if err != nil || direct.Failures[0].ID() != res.Failures[0].ID() || direct.Total != res.Total {
		t.Errorf("ParseGoTestJSON = %+v, %v; want report.Parse's result", direct, err)
	}
	if scr, parsed, err := report.Screen([]byte(stream)); err != nil || parsed || scr.Format != "go-test-json" {
		t.Errorf("report.Screen = %+v, %v, %v: want the format, screened without a parse", scr, parsed, err)
	}
	if _, _, err := report.Screen([]byte(`{"Action":"output","Output":"hello\n"}`)); err == nil || !strings.Contains(err.Error(), "no test events") {
		t.Errorf("a stream with no test event screened: %v", err)
	}
	if _, err := report.Parse([]byte("ok  \texample.com/calc\t0.1s\n")); err == nil || !strings.Contains(err.Error(), "want go test -json or JUnit XML") {
		t.Errorf("a report in no format: %v", err)
	}
}
