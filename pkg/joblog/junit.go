package joblog

import (
	"encoding/xml"
	"strings"
)

// Suite is one <testsuite> of a JUnit document a console reader writes:
// the form report.Parse reads, in the dialect of the runner's own JUnit
// reporter, so that a log gives the ids its report would have.
type Suite struct {
	XMLName xml.Name `xml:"testsuite"`
	Name    string   `xml:"name,attr"`
	File    string   `xml:"file,attr,omitempty"`
	// Disabled is node:test's attribute ("0"), by which its dialect is
	// known; "" leaves it out.
	Disabled  string `xml:"disabled,attr,omitempty"`
	Tests     int    `xml:"tests,attr"`
	Failures  int    `xml:"failures,attr"`
	Errors    int    `xml:"errors,attr"`
	Skipped   int    `xml:"skipped,attr"`
	TestCases []Case `xml:"testcase"`
	// Suites are the suites nested in this one (node:test's describe
	// blocks), after its cases.
	Suites []Suite `xml:"testsuite"`
}

// Case is one <testcase>: passed when it has neither Failure, Error nor
// Skipped.
type Case struct {
	ClassName string   `xml:"classname,attr"`
	Name      string   `xml:"name,attr"`
	File      string   `xml:"file,attr,omitempty"`
	Failure   *Problem `xml:"failure,omitempty"`
	Error     *Problem `xml:"error,omitempty"`
	Skipped   *Problem `xml:"skipped,omitempty"`
}

// Problem is a failure's, an error's or a skip's message and text.
type Problem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// MaxOutputLines bounds the lines of output a reader keeps of one failure.
const MaxOutputLines = 400

// JUnit is the document of suites (nil when there are none), their counts
// filled in.
func JUnit(name string, suites []Suite) []byte { return Document(name, nil, suites) }

// Document is the document of cases outside any suite (node:test writes a
// file that failed to load so) and suites; nil when there are neither.
func Document(name string, cases []Case, suites []Suite) []byte {
	if len(cases)+len(suites) == 0 {
		return nil
	}
	doc := struct {
		XMLName   xml.Name `xml:"testsuites"`
		Name      string   `xml:"name,attr,omitempty"`
		TestCases []Case   `xml:"testcase"`
		Suites    []Suite  `xml:"testsuite"`
	}{Name: name, TestCases: cases}
	for _, s := range suites {
		doc.Suites = append(doc.Suites, counted(s))
	}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil // only unsupported types fail, and there are none
	}
	return append([]byte(xml.Header), out...)
}

// counted is s with its counts (and its nested suites') filled in.
func counted(s Suite) Suite {
	s.Tests, s.Failures, s.Errors, s.Skipped = len(s.TestCases), 0, 0, 0
	for _, c := range s.TestCases {
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	nested := make([]Suite, 0, len(s.Suites))
	for _, n := range s.Suites {
		n = counted(n)
		s.Tests, s.Failures, s.Errors, s.Skipped = s.Tests+n.Tests, s.Failures+n.Failures, s.Errors+n.Errors, s.Skipped+n.Skipped
		nested = append(nested, n)
	}
	s.Suites = nested
	return s
}

// Output is a failure's lines as one text, at most MaxOutputLines of
// them, without what XML cannot carry.
func Output(lines []string) string {
	if len(lines) > MaxOutputLines {
		lines = append(append([]string(nil), lines[:MaxOutputLines]...), "…")
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' {
			return -1
		}
		if r == '\uFFFE' || r == '\uFFFF' {
			return -1
		}
		return r
	}, strings.TrimSpace(strings.Join(lines, "\n")))
}
