package report

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/report/reporttest"
)

// allocated is the bytes the process allocated while f ran. The tests
// that call it are not parallel: no other test allocates meanwhile.
func allocated(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The parser's allocations on a 1 MiB report of nested suites are a small
// multiple of the report. go-junit's node tree, each node holding its inner
// XML, allocated 3.9 GB for deep-4000 (3,700 times the report), 1.1 GB for
// deep-1000 and 64 MB for wide-24 (61 times).
func TestParseJUnitNestedAllocations(t *testing.T) {
	for _, c := range []struct {
		name    string
		depth   int
		wantErr string // "" for a report that parses
	}{
		{"deep-4000", 4000, "nested more than"},
		{"deep-1000", 1000, "nested more than"},
		{"wide-24", 24, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := reporttest.NestedJUnit(1<<20, c.depth)
			var (
				res Result
				err error
			)
			n := allocated(func() { res, err = Parse(rep) })
			t.Logf("%s: %d bytes of report, %d bytes allocated (%.1f×); %d tests, %d failures, error %v",
				c.name, len(rep), n, float64(n)/float64(len(rep)), res.Total, len(res.Failures), err)
			if c.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("error %v, want one that says %q", err, c.wantErr)
			}
			if limit := 50 * uint64(len(rep)); n > limit {
				t.Errorf("parsing %d bytes allocated %d bytes, more than %d (50×)", len(rep), n, limit)
			}
		})
	}
}

// nestedSuites is a report whose elements nest levels deep: testsuites,
// suites, a testcase and its failure.
func nestedSuites(levels int) string {
	suites := levels - 3
	return "<testsuites>" + strings.Repeat(`<testsuite name="s">`, suites) +
		`<testcase classname="c" name="TestDeep"><failure message="deep">x_test.go:1: deep</failure></testcase>` +
		strings.Repeat("</testsuite>", suites) + "</testsuites>"
}

func TestParseJUnitDepthLimit(t *testing.T) {
	t.Parallel()
	res, err := Parse([]byte(nestedSuites(maxJUnitDepth)))
	if err != nil {
		t.Fatalf("%d levels: %v", maxJUnitDepth, err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Message != "deep" {
		t.Errorf("%d levels: failures %+v", maxJUnitDepth, res.Failures)
	}
	_, err = Parse([]byte(nestedSuites(maxJUnitDepth + 1)))
	if err == nil || !strings.Contains(err.Error(), "nested more than 32 deep") {
		t.Errorf("%d levels: error %v, want one naming the limit", maxJUnitDepth+1, err)
	}
}

// testLimits are limits small enough to reach in a test.
func testLimits() junitLimits {
	return junitLimits{bytes: 1 << 20, depth: maxJUnitDepth, cases: 10, attrs: 3, suiteOutput: 1000}
}

func TestParseJUnitCaseLimit(t *testing.T) {
	t.Parallel()
	cases := func(n int) string {
		return `<testsuite name="p">` + strings.Repeat(`<testcase name="T"/>`, n) + `</testsuite>`
	}
	res, err := parseJUnit(strings.NewReader(cases(10)), testLimits())
	if err != nil || res.Total != 10 {
		t.Fatalf("10 test cases: total %d, error %v", res.Total, err)
	}
	_, err = parseJUnit(strings.NewReader(cases(11)), testLimits())
	if err == nil || !strings.Contains(err.Error(), "more than 10 test cases") {
		t.Errorf("11 test cases: error %v, want one naming the limit", err)
	}
}

// The attributes of an element are counted as the report is read: the
// quoted values of its start tag, not the quotes of texts, comments, CDATA
// sections, processing instructions or a document type.
func TestParseJUnitAttributeLimit(t *testing.T) {
	t.Parallel()
	quotes := strings.Repeat(`"'`, 20)
	ok := `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE testsuites [ <!ENTITY x "` + strings.Repeat("'", 30) + `"> ]>
<?pi ` + quotes + `?>
<!-- ` + quotes + ` -->
<testsuites a="1" b='2' c="3">` + quotes + `
  <testsuite name="p" tests="1" time="` + strings.Repeat("'", 30) + `">
    <testcase name="T" classname="c"><failure message="m"><![CDATA[` + quotes + `]]>` + strings.ReplaceAll(quotes, `"`, "&quot;") + `</failure></testcase>
  </testsuite>
</testsuites>`
	res, err := parseJUnit(strings.NewReader(ok), testLimits())
	if err != nil || len(res.Failures) != 1 {
		t.Fatalf("elements of 3 attributes at most: %d failures, error %v", len(res.Failures), err)
	}
	_, err = parseJUnit(strings.NewReader(`<testsuite name="p" a="1" b="2" c="3"><testcase name="T"/></testsuite>`), testLimits())
	if err == nil || !strings.Contains(err.Error(), "more than 3 attributes") {
		t.Errorf("an element of 4 attributes: error %v, want one naming the limit", err)
	}
}

type failingReader struct{ data io.Reader }

func (r failingReader) Read(p []byte) (int, error) {
	n, err := r.data.Read(p)
	if err == io.EOF {
		return n, errors.New("connection reset")
	}
	return n, err
}

func TestParseJUnitSizeLimit(t *testing.T) {
	t.Parallel()
	lim := testLimits()
	lim.bytes = 1000
	report := func(n int) string {
		head, tail := `<testsuite name="p"><testcase name="T"/>`, `</testsuite>`
		return head + strings.Repeat(" ", n-len(head)-len(tail)) + tail
	}
	if _, err := parseJUnit(strings.NewReader(report(1000)), lim); err != nil {
		t.Fatalf("1000 bytes: %v", err)
	}
	_, err := parseJUnit(strings.NewReader(report(1001)), lim)
	if err == nil || !strings.Contains(err.Error(), "larger than 1000 bytes") {
		t.Errorf("1001 bytes: error %v, want one naming the limit", err)
	}
	// A reader that fails is not a malformed report.
	_, err = ParseJUnit(failingReader{strings.NewReader(`<testsuite name="p">`)})
	if err == nil || !strings.Contains(err.Error(), "read: connection reset") {
		t.Errorf("failing reader: error %v", err)
	}
}

// A suite's long name is each of its test IDs' package when its test
// cases have no classname: the IDs kept stay within a multiple of the
// report.
func TestParseJUnitIDBudget(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", 200<<10)
	report := func(cases int) string {
		return `<testsuite name="` + long + `">` + strings.Repeat(`<testcase name="T"/>`, cases) + `</testsuite>`
	}
	res, err := Parse([]byte(report(5)))
	if err != nil || len(res.Passed) != 5 || res.Passed[0] != long+".T" {
		t.Fatalf("5 test cases: %d passed, error %v", len(res.Passed), err)
	}
	// 100 IDs of 200 KiB: 20 MB for a 202 KB report.
	_, err = Parse([]byte(report(100)))
	if err == nil || !strings.Contains(err.Error(), "test IDs take more than") {
		t.Errorf("100 test cases: error %v, want the IDs' limit", err)
	}
}

// A text longer than what is kept of it gives the output its whole would.
func TestParseJUnitLongText(t *testing.T) {
	t.Parallel()
	var body strings.Builder
	for i := 0; body.Len() < 3<<20; i++ {
		fmt.Fprintf(&body, "    at com.example.Frame%d(Frame%d.java:%d) é\n", i, i, i%97)
	}
	in := `<testsuite name="s"><testcase classname="c" name="t"><failure message="boom">` + body.String() +
		`</failure><system-out>after</system-out></testcase></testsuite>`
	res, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := clip.Middle(strings.TrimRight(body.String(), "\n")+"\nafter\n", maxOutput)
	if got := res.Failures[0].Output; got != want {
		t.Errorf("output of a 3 MiB body differs from the whole body's:\n%.300q…\nwant\n%.300q…", got, want)
	}
	var x junitText
	x.write([]byte(body.String()))
	if kept, hidden := x.kept(); len(kept) > junitTextHead+junitTextTail || hidden <= 0 || utf8.RuneCountInString(kept)+hidden != utf8.RuneCountInString(body.String()) {
		t.Errorf("a text of %d bytes kept %d bytes, %d characters hidden", body.Len(), len(kept), hidden)
	}
}

// A suite's output is added to each of its failures while the report's
// budget for it lasts; then the failures say it was left out.
func TestParseJUnitSuiteOutputBudget(t *testing.T) {
	t.Parallel()
	out := strings.Repeat("suite log\n", 30) // 300 bytes
	in := `<testsuite name="s">` + strings.Repeat(`<testcase name="T"><failure>x</failure></testcase>`, 5) +
		`<system-out>` + out + `</system-out></testsuite>`
	res, err := parseJUnit(strings.NewReader(in), testLimits())
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range res.Failures {
		has, left := strings.Contains(f.Output, "suite log"), strings.Contains(f.Output, "left out")
		if i < 3 && (!has || left) || i >= 3 && (has || !left) {
			t.Errorf("failure %d (budget for 3): output %q", i, f.Output)
		}
	}
}
