package report

import (
	"sync"
	"sync/atomic"

	"github.com/redfix/redfix/pkg/task"
)

// JUnitDialect is a driver's capability to read its runners' JUnit XML
// (RegisterJUnitDialect, from the driver's init): how a test case is named
// canonically, what its failure says, and which paths are the files its
// tests are named by. ParseJUnit asks every registered dialect, in the
// order they were registered; a case no dialect names is named as any
// report's (see ParseJUnit).
type JUnitDialect interface {
	// JUnitReader starts the reading of one report.
	JUnitReader() JUnitReader
	// IsFile reports a path that names one of the dialect's files: the
	// paths of a report are made relative to the roots that its files
	// show (a file named absolute in one place and relative in another).
	IsFile(path string) bool
}

// JUnitReader reads one report's test cases in a dialect; it may keep what
// it learns from a case for the cases that follow.
type JUnitReader interface {
	// NameCase names the test case c, in its open suites (outermost
	// first, the innermost holds c): c.Package, c.Name, c.Build and
	// c.Claimed. False when the case is none of the dialect's; c is then
	// left as it was.
	NameCase(c *JUnitCase, suites []*JUnitSuite) bool
	// DescribeFailure fills the failure f of the case c (its message and
	// frames already read as any report's are), when the case is the
	// dialect's (c.Claimed) or its failure's text shows that it is;
	// build: the case stands for a file or package that did not build.
	// False when it is not the dialect's; f is then left as it was.
	DescribeFailure(f *task.Failure, c *JUnitCase, build bool) bool
}

// JUnitCase is a test case as a dialect reads it.
type JUnitCase struct {
	// Name, Classname and File are the test case's attributes (File ""
	// when it has none); Failing: it failed or erred. Message and Body
	// are its failure's message attribute and text (for DescribeFailure).
	Name, Classname, File string
	Failing               bool
	Message, Body         string
	// What a dialect names: Package, the file or suite that holds the
	// test; Build: the case stands for a file that did not load (a build
	// error of Package); Claimed: the case is certainly the dialect's,
	// whose reader describes its failure.
	Package        string
	Build, Claimed bool
}

// JUnitSuite is an open suite as a dialect reads it.
type JUnitSuite struct {
	// Name and File are its attributes; HasDisabled: it has a disabled
	// attribute; Loose: it stands for a test case outside any suite.
	Name, File         string
	HasDisabled, Loose bool
}

var junitDialects struct {
	mu  sync.Mutex // serializes registrations
	all atomic.Pointer[[]JUnitDialect]
}

// RegisterJUnitDialect adds a driver's JUnit dialect. Drivers call it from
// their package's init (pkg/lang/all loads every driver); a dialect is
// never taken back.
func RegisterJUnitDialect(d JUnitDialect) {
	junitDialects.mu.Lock()
	defer junitDialects.mu.Unlock()
	var all []JUnitDialect
	if old := junitDialects.all.Load(); old != nil {
		all = append(all, *old...)
	}
	all = append(all, d)
	junitDialects.all.Store(&all)
}

// dialects are the JUnit dialects registered so far.
func dialects() []JUnitDialect {
	if all := junitDialects.all.Load(); all != nil {
		return *all
	}
	return nil
}

// isDialectFile reports a path that one of ds claims as a file.
func isDialectFile(ds []JUnitDialect, p string) bool {
	for _, d := range ds {
		if d.IsFile(p) {
			return true
		}
	}
	return false
}

// nameCase names tc in the first registered dialect that names it; false
// when none does.
func (p *junitParser) nameCase(tc *junitCase) bool {
	for _, r := range p.readers {
		c := JUnitCase{Name: tc.name, Classname: tc.classname, File: tc.file, Failing: tc.status == statusFailed || tc.status == statusError}
		if !r.NameCase(&c, p.views) {
			continue
		}
		tc.name, tc.pkg, tc.build = c.Name, c.Package, c.Build
		tc.reader, tc.claimed = r, c.Claimed
		return true
	}
	return false
}

// describeInDialect fills f, the failure of tc whose failure's text is
// body, in its dialect: the reader that named tc first, then the others;
// false when none takes it.
func (p *junitParser) describeInDialect(f *task.Failure, tc *junitCase, body string, build bool) bool {
	c := JUnitCase{Name: tc.name, Classname: tc.classname, File: tc.file, Failing: true, Message: tc.message, Body: body, Package: tc.pkg, Build: tc.build}
	if tc.reader != nil {
		c.Claimed = tc.claimed
		if tc.reader.DescribeFailure(f, &c, build) {
			return true
		}
		c.Claimed = false
	}
	for _, r := range p.readers {
		if r != tc.reader && r.DescribeFailure(f, &c, build) {
			return true
		}
	}
	return false
}
