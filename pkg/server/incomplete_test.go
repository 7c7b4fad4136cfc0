package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/ingest"
)

// A go test -json report cut before its package's final result: accepted
// and stored as it came; parsed where triage parses it, its cut-off test is
// not a failure and the package is recorded as incomplete (triage logs it).
func TestPostIncompleteReport(t *testing.T) {
	srv, in, _, _ := setup(t, Options{})
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
	if out["format"] != "go-test-json" || len(in.subs) != 1 || string(in.subs[0].Report) != cut {
		t.Fatalf("answer = %v; stored %d submissions", out, len(in.subs))
	}
	res, err := ingest.Checked(in.subs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != 1 || len(res.NotRun) != 1 || len(res.Incomplete) != 1 || res.Incomplete[0] != "example.com/m" {
		t.Errorf("parsed for triage: %d failures, not run %v, incomplete %v; want the one failure that ended, the cut-off test not run", len(res.Failures), res.NotRun, res.Incomplete)
	}
}
