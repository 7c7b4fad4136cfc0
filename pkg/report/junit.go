package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/redfix/redfix/pkg/task"
)

// Limits on one JUnit report. A report past one is rejected with an error
// that names it, except texts, which are capped: the parser's memory stays
// a small multiple of the report's size whatever the report holds.
const (
	// MaxJUnitBytes is the largest report ParseJUnit reads. The ingest API
	// takes at most 32 MiB (server.MaxReportBytes) and a GitHub artifact's
	// file at most 64 MiB (runreport.MaxFileBytes).
	MaxJUnitBytes = 64 << 20
	// maxJUnitDepth bounds the nesting of elements: testsuites, suites
	// within suites, a testcase, its failure. Real reports nest a few.
	maxJUnitDepth = 32
	// maxJUnitCases bounds the test cases of one report.
	maxJUnitCases = 200_000
	// maxJUnitAttrs bounds the attributes of one element: the decoder
	// keeps them all at once, at a few dozen times their size. Real
	// reports' elements have a dozen.
	maxJUnitAttrs = 256
	// A text (a failure's body, a system-out or system-err) keeps its
	// first junitTextHead and its last junitTextTail bytes, as Text does
	// for go test's output. Each is four times the characters a failure's
	// output keeps (maxOutput), so that the output is the same as from the
	// whole text (see clip.MiddleOf).
	junitTextHead = 64 << 10
	junitTextTail = 64 << 10
	// maxSuiteOutput bounds the bytes of suites' system-out and system-err
	// repeated into their failures' output, over the report: one suite's
	// output is added to each of its failures. Past it, a failure's output
	// says that its suite's was left out.
	maxSuiteOutput = 8 << 20
	// The test IDs kept (passed tests', failures') take at most
	// junitIDsPerByte times the bytes read, plus junitIDsSlack: an ID
	// repeats its suite's name when the test case has no classname.
	junitIDsPerByte = 4
	junitIDsSlack   = 1 << 20
)

// ParseJUnit parses JUnit XML: a <testsuites> document, a bare <testsuite>,
// or several suites one after the other, nested suites included.
//
// A testcase's classname is the failure's Package (the enclosing suite's
// name when the classname is empty) and its name the Test. The message
// attribute of <failure> or <error> is the Message, unless it is missing or
// says nothing ("Failed", "error", …), in which case the message is picked
// from the element's body. The body, followed by the testcase's system-out
// and system-err, is the Output. A testcase named "[build failed]" (how
// go-junit-report writes a package that did not compile) is a build error.
//
// Totals are counted here from the testcases: suites' own counts are
// ignored, they are often stale for nested suites.
//
// The runners' dialects: Surefire and pytest (classname is the class or
// module; <error> for exceptions and failed setups, Kind "error"), gotestsum
// (a package that does not compile is a failing "TestMain" whose output is
// compiler errors: a build error), and the dialects the drivers register
// (JUnitDialect: a driver's runners' own names for their cases, a test
// file that did not load a build error of the file, their failures'
// messages and frames). A suite's own system-out and
// system-err are added to its failures' output. A failure's output is read
// first as the drivers' runners print theirs (OutputReader: its message
// and frames), else as any text (its first line); frames are otherwise
// read from Java, Kotlin, Python, JavaScript and TypeScript traces.
//
// The report is read as a stream of tokens and only what the result needs
// is kept, within the limits above (MaxJUnitBytes, 32 levels of elements,
// 256 attributes per element, 200,000 test cases; texts capped to their
// head and tail).
//
// Which elements count: a <testsuite> anywhere outside a suite is a suite,
// and a <testcase> there a suite of its own (a runner may write its
// top-level tests so);
// within a suite, its <testsuite>, <testcase>, <system-out> and
// <system-err> children (other children, <properties> for one, are not
// read); within a testcase, its <failure>, <error>, <skipped>,
// <system-out> and <system-err> children, the last of each kind winning
// (the last of failure, error and skipped is the outcome). A text is the
// character data (text and CDATA) within its element, line ends
// normalized as XML specifies.
func ParseJUnit(r io.Reader) (Result, error) {
	return parseJUnit(r, junitLimits{bytes: MaxJUnitBytes, depth: maxJUnitDepth, cases: maxJUnitCases, attrs: maxJUnitAttrs, suiteOutput: maxSuiteOutput})
}

// junitLimits are the limits of one parse (tests lower them).
type junitLimits struct {
	bytes               int64
	depth, cases, attrs int
	suiteOutput         int
}

func parseJUnit(r io.Reader, lim junitLimits) (Result, error) {
	return parseJUnitIn(r, lim, dialects())
}

// parseJUnitIn is parseJUnit in the dialects ds (none: every case is named
// as any report's).
func parseJUnitIn(r io.Reader, lim junitLimits, ds []JUnitDialect) (Result, error) {
	src := &junitSource{r: io.LimitReader(r, lim.bytes+1), tags: tagScanner{maxAttrs: lim.attrs}}
	p := &junitParser{dec: xml.NewDecoder(src), lim: lim, dialects: ds}
	for _, d := range ds {
		p.readers = append(p.readers, d.JUnitReader())
	}
	res, err := p.parse()
	switch {
	case src.n > lim.bytes:
		return Result{}, fmt.Errorf("parse junit: the report is larger than %d bytes", lim.bytes)
	case src.tags.err != nil:
		return Result{}, fmt.Errorf("parse junit: %w", src.tags.err)
	case src.err != nil:
		return Result{}, fmt.Errorf("parse junit: read: %w", src.err)
	case err != nil:
		return Result{}, fmt.Errorf("parse junit: %w", err)
	}
	return res, nil
}

// junitParser reads one report's tokens.
type junitParser struct {
	dec *xml.Decoder
	lim junitLimits
	// stack has an entry per open element; suites the open suites,
	// innermost last (views what the dialects see of them); tc the open
	// test case.
	stack  []junitElem
	suites []*junitSuite
	views  []*JUnitSuite
	tc     *junitCase
	// top are the suites that are in no other suite, in order.
	top []*junitSuite
	// content: a token other than blank text was seen.
	content bool
	// cases counts the test cases; ids the bytes of the test IDs kept;
	// suiteOut the bytes of suite output repeated into failures.
	cases, ids, suiteOut int
	// readers read the report in the dialects.
	dialects []JUnitDialect
	readers  []JUnitReader
}

// junitRole is what an open element is to the parser.
type junitRole uint8

const (
	roleOutside junitRole = iota // outside any suite: a testsuite in it is a suite
	roleIgnored                  // in a suite or test case, not read
	roleSuite
	roleCase
	roleText // its character data, and its descendants', go to text
)

type junitElem struct {
	role junitRole
	text *junitText
}

// junitSuite is a suite: what its own test cases say, and its nested suites.
type junitSuite struct {
	// JUnitSuite is what the dialects see of the suite: its name, its
	// file attribute, whether it has a disabled attribute, and whether it
	// stands for a test case outside any suite (Loose).
	JUnitSuite
	out, err junitText
	// What the suite's own test cases say; the failures wait for the
	// suite's end, which has the system-out and system-err added to them.
	total    int
	passed   []string
	skipped  []string
	pending  []*junitCase
	failures []task.Failure
	builds   []task.Failure
	children []*junitSuite
}

// junitCase is a test case.
type junitCase struct {
	pkg, name, classname string
	// file is the test case's file attribute; reader is the dialect's
	// reader that named the case (nil for none), claimed whether it
	// claimed the case (JUnitCase.Claimed); build: the case stands for a
	// test file that did not load.
	file           string
	reader         JUnitReader
	claimed, build bool
	status         junitStatus
	// The message and type attributes and the body of the last <failure>
	// or <error>.
	message, typ   string
	body, out, err *junitText
}

type junitStatus uint8

const (
	statusPassed junitStatus = iota
	statusSkipped
	statusFailed
	statusError
)

func (p *junitParser) parse() (Result, error) {
	for {
		tok, err := p.dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Result{}, fmt.Errorf("malformed XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			p.content = true
			if err := p.start(t); err != nil {
				return Result{}, err
			}
		case xml.EndElement:
			if err := p.end(); err != nil {
				return Result{}, err
			}
		case xml.CharData:
			if len(p.stack) > 0 {
				if e := p.stack[len(p.stack)-1]; e.role == roleText {
					e.text.write(t)
				}
			}
			if !p.content && len(bytes.TrimSpace(t)) > 0 {
				p.content = true
			}
		default: // comments, processing instructions, directives
			p.content = true
		}
	}
	if !p.content {
		return Result{}, ErrEmpty
	}
	if len(p.top) == 0 {
		return Result{}, errors.New("no <testsuite> element (is this JUnit XML?)")
	}
	res := Result{Format: "junit"}
	for _, s := range p.top {
		s.addTo(&res)
	}
	relativeTo(&res, func(path string) bool { return isDialectFile(p.dialects, path) })
	return res, nil
}

// line is the line the decoder is at, for errors.
func (p *junitParser) line() int {
	l, _ := p.dec.InputPos()
	return l
}

func (p *junitParser) start(el xml.StartElement) error {
	if len(p.stack) == p.lim.depth {
		return fmt.Errorf("elements nested more than %d deep (<%s> on line %d): the limit of a test report", p.lim.depth, el.Name.Local, p.line())
	}
	parent := junitElem{role: roleOutside}
	if len(p.stack) > 0 {
		parent = p.stack[len(p.stack)-1]
	}
	e := junitElem{role: roleIgnored}
	switch parent.role {
	case roleOutside:
		e.role = roleOutside
		switch el.Name.Local {
		case "testsuite":
			p.openSuite(el)
			e.role = roleSuite
		case "testcase":
			// A test case in no suite (node:test's top-level tests) is
			// a suite of its own.
			if err := p.countCase(); err != nil {
				return err
			}
			p.openSuite(xml.StartElement{})
			p.suites[len(p.suites)-1].Loose = true
			p.tc = newCase(el)
			e.role = roleCase
		}
	case roleSuite:
		s := p.suites[len(p.suites)-1]
		switch el.Name.Local {
		case "testsuite":
			p.openSuite(el)
			e.role = roleSuite
		case "testcase":
			if err := p.countCase(); err != nil {
				return err
			}
			p.tc = newCase(el)
			e.role = roleCase
		case "system-out":
			s.out = junitText{}
			e = junitElem{role: roleText, text: &s.out}
		case "system-err":
			s.err = junitText{}
			e = junitElem{role: roleText, text: &s.err}
		}
	case roleCase:
		tc := p.tc
		switch el.Name.Local {
		case "failure", "error":
			tc.status = statusFailed
			if el.Name.Local == "error" {
				tc.status = statusError
			}
			tc.message, tc.typ = capText(attr(el, "message")), capText(attr(el, "type"))
			tc.body = &junitText{}
			e = junitElem{role: roleText, text: tc.body}
		case "skipped":
			tc.status = statusSkipped
		case "system-out":
			tc.out = &junitText{}
			e = junitElem{role: roleText, text: tc.out}
		case "system-err":
			tc.err = &junitText{}
			e = junitElem{role: roleText, text: tc.err}
		}
	case roleText:
		e = parent
	}
	p.stack = append(p.stack, e)
	return nil
}

// countCase counts a test case, within the limit.
func (p *junitParser) countCase() error {
	if p.cases++; p.cases > p.lim.cases {
		return fmt.Errorf("more than %d test cases (line %d): the limit of one report; split it (one per job or shard)", p.lim.cases, p.line())
	}
	return nil
}

func newCase(el xml.StartElement) *junitCase {
	return &junitCase{name: attr(el, "name"), classname: attr(el, "classname"), file: attr(el, "file")}
}

func (p *junitParser) end() error {
	e := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	switch e.role {
	case roleSuite:
		s := p.suites[len(p.suites)-1]
		p.popSuite()
		p.closeSuite(s)
	case roleCase:
		tc := p.tc
		p.tc = nil
		if err := p.closeCase(tc); err != nil {
			return err
		}
		if s := p.suites[len(p.suites)-1]; s.Loose {
			p.popSuite()
			p.closeSuite(s)
		}
	}
	return nil
}

func (p *junitParser) openSuite(el xml.StartElement) {
	s := &junitSuite{JUnitSuite: JUnitSuite{Name: attr(el, "name"), File: attr(el, "file")}}
	for _, a := range el.Attr {
		s.HasDisabled = s.HasDisabled || a.Name.Local == "disabled"
	}
	if n := len(p.suites); n > 0 {
		p.suites[n-1].children = append(p.suites[n-1].children, s)
	} else {
		p.top = append(p.top, s)
	}
	p.suites = append(p.suites, s)
	p.views = append(p.views, &s.JUnitSuite)
}

// popSuite closes the innermost open suite.
func (p *junitParser) popSuite() {
	p.suites = p.suites[:len(p.suites)-1]
	p.views = p.views[:len(p.views)-1]
}

func (p *junitParser) closeCase(tc *junitCase) error {
	s := p.suites[len(p.suites)-1]
	if !p.nameCase(tc) {
		tc.pkg = tc.classname
		if tc.pkg == "" || (tc.pkg == tc.name && s.Name != "") {
			tc.pkg = s.Name
		}
	}
	switch tc.status {
	case statusPassed:
		id := task.Failure{Package: tc.pkg, Test: tc.name}.ID()
		if err := p.keepID(len(id)); err != nil {
			return err
		}
		s.total++
		s.passed = append(s.passed, id)
	case statusSkipped:
		id := task.Failure{Package: tc.pkg, Test: tc.name}.ID()
		if err := p.keepID(len(id)); err != nil {
			return err
		}
		s.total++
		s.skipped = append(s.skipped, id)
	default:
		if err := p.keepID(len(tc.pkg) + 1 + len(tc.name)); err != nil {
			return err
		}
		s.pending = append(s.pending, tc)
	}
	return nil
}

// keepID counts the n bytes of a test ID kept, within the budget of IDs.
func (p *junitParser) keepID(n int) error {
	p.ids += n
	read := p.dec.InputOffset()
	if limit := junitIDsPerByte*read + junitIDsSlack; int64(p.ids) > limit {
		return fmt.Errorf("the test IDs take more than %d bytes, %d times the %d bytes read (line %d): a long suite name repeated for each of its test cases?",
			limit, junitIDsPerByte, read, p.line())
	}
	return nil
}

// closeSuite makes the suite's failures, now that its output is known.
func (p *junitParser) closeSuite(s *junitSuite) {
	var out suiteOutput
	if len(s.pending) > 0 {
		var h1, h2 int
		out.out, h1 = s.out.kept()
		out.err, h2 = s.err.kept()
		out.hidden = h1 + h2
	}
	for _, tc := range s.pending {
		f := p.failure(tc, out)
		if tc.build || tc.name == "[build failed]" || compileFailure(tc.name, f.Output) {
			f.Test = ""
			// A dialect may report a file that failed to load twice.
			if !slices.ContainsFunc(s.builds, func(b task.Failure) bool { return tc.build && b.Package == f.Package }) {
				s.builds = append(s.builds, f)
			}
			continue
		}
		s.total++
		s.failures = append(s.failures, f)
	}
	s.pending = nil
	s.out, s.err = junitText{}, junitText{}
}

// addTo adds the suite's tests to res, then its nested suites'.
func (s *junitSuite) addTo(res *Result) {
	res.Total += s.total
	res.Passed = append(res.Passed, s.passed...)
	res.Skipped = append(res.Skipped, s.skipped...)
	res.Failures = append(res.Failures, s.failures...)
	res.BuildErrors = append(res.BuildErrors, s.builds...)
	for _, c := range s.children {
		c.addTo(res)
	}
}
