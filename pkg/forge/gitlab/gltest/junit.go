package gltest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// testCase is a JUnit test case as GitLab keeps it in a test report.
type testCase struct {
	status, name, classname, file string
	time                          float64
	// output is what GitLab shows as the case's system output: the text
	// of its failure, error or skipped element, or, for one with no text,
	// that element's attributes.
	output any
}

func (tc testCase) json() map[string]any {
	return map[string]any{
		"status": tc.status, "name": tc.name, "classname": tc.classname, "file": nilIfEmpty(tc.file),
		"execution_time": tc.time, "system_output": tc.output, "stack_trace": nil, "attachment_url": nil,
		"recent_failures": nil,
	}
}

// xmlCase and xmlProblem are what JUnit XML holds of a case.
type xmlCase struct {
	Name      string      `xml:"name,attr"`
	Classname string      `xml:"classname,attr"`
	File      string      `xml:"file,attr"`
	Time      float64     `xml:"time,attr"`
	Failure   *xmlProblem `xml:"failure"`
	Error     *xmlProblem `xml:"error"`
	Skipped   *xmlProblem `xml:"skipped"`
}

type xmlProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// output is p as GitLab shows it: its text, else its attributes.
func (p *xmlProblem) output() any {
	if t := strings.TrimSpace(p.Text); t != "" {
		return p.Text
	}
	m := map[string]any{}
	if p.Message != "" {
		m["message"] = p.Message
	}
	if p.Type != "" {
		m["type"] = p.Type
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// junitCases reads every test case of a JUnit report, in every suite
// however nested.
func junitCases(data []byte) ([]testCase, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	var out []testCase
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("read JUnit XML: %w", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok || el.Name.Local != "testcase" {
			continue
		}
		var c xmlCase
		if err := dec.DecodeElement(&c, &el); err != nil {
			return nil, fmt.Errorf("read a test case: %w", err)
		}
		tc := testCase{status: "success", name: c.Name, classname: c.Classname, file: c.File, time: c.Time}
		switch {
		case c.Failure != nil:
			tc.status, tc.output = "failed", c.Failure.output()
		case c.Error != nil:
			tc.status, tc.output = "error", c.Error.output()
		case c.Skipped != nil:
			tc.status, tc.output = "skipped", c.Skipped.output()
		}
		out = append(out, tc)
	}
}
