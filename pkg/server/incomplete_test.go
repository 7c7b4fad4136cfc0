package server

import (
	"net/http"
	"strings"
	"testing"
)

// A go test -json report cut before its package's final result: accepted,
// its cut-off test not a failure, the package recorded as incomplete.
func TestPostIncompleteReport(t *testing.T) {
	srv, _, logs, _ := setup(t, Options{})
	cut := strings.Join([]string{
		`{"Action":"start","Package":"example.com/m"}`,
		`{"Action":"run","Package":"example.com/m","Test":"TestDone"}`,
		`{"Action":"output","Package":"example.com/m","Test":"TestDone","Output":"--- FAIL: TestDone (0.00s)\n"}`,
		`{"Action":"fail","Package":"example.com/m","Test":"TestDone","Elapsed":0}`,
		`{"Action":"run","Package":"example.com/m","Test":"TestCut"}`,
		`{"Action":"output","Package":"example.com/m","Test":"TestCut","Output":"=== RUN   TestCut\n"}`,
		`{"Action":"output","Package":"example.com/m","Test":"TestCut","Outp`,
	}, "\n")
	code, out := post(t, srv.URL+"/api/v1/reports?repo=/r&commit=abc", cut, nil)
	if code != http.StatusAccepted {
		t.Fatalf("code %d, body %v", code, out)
	}
	if out["failures"] != float64(1) || out["not_run"] != float64(1) {
		t.Errorf("answer = %v; want the one failure that ended, and the cut-off test not run", out)
	}
	if inc, _ := out["incomplete"].([]any); len(inc) != 1 || inc[0] != "example.com/m" {
		t.Errorf("incomplete = %v", out["incomplete"])
	}
	if logs.FilterMessage("report is incomplete").Len() != 1 {
		t.Error("the incomplete report is not logged")
	}
}
