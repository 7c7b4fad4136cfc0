package ingestbench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/report"
)

// Every report is a go test -json run with one failure naming its own
// number, all of one length, none equal to another: each post is a new
// submission, and a buffer reused from a longer report leaves nothing
// behind.
func TestReportsDifferOnlyInTheirNumber(t *testing.T) {
	rs := NewReports(6 << 10)
	if n := rs.Len(); n < 5<<10 || n > 7<<10 {
		t.Fatalf("a report of about 6 KB is %d bytes", n)
	}
	var buf []byte
	seen := map[string]bool{}
	for _, i := range []int{0, 7, 41, 999, 123456789} {
		buf = rs.Put(buf, i)
		if len(buf) != rs.Len() || seen[string(buf)] {
			t.Fatalf("report %d: %d bytes, seen before %v", i, len(buf), seen[string(buf)])
		}
		seen[string(buf)] = true
		res, err := report.Parse(buf)
		if err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
		if len(res.Failures) != 1 || res.Total < 10 {
			t.Fatalf("report %d: %d tests, failures %+v", i, res.Total, res.Failures)
		}
		if want := fmt.Sprintf("Sum(%09d, 1) = %09d, want %09d", i, i, i+1); !strings.Contains(res.Failures[0].Output, want) {
			t.Fatalf("report %d's failure does not name its number:\n%s", i, res.Failures[0].Output)
		}
	}
}
