package gitlab

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go/v2"
)

// junitOfSuite writes a suite of a pipeline's test report back as JUnit
// XML, which triage reads like any report: each case with its class name,
// name and file as the job's report had them, a failure or an error with
// the text GitLab kept of it.
func junitOfSuite(s *gl.PipelineTestSuites) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<testsuites>\n<testsuite name=%s tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n",
		attr(s.Name), s.TotalCount, s.FailedCount, s.ErrorCount, s.SkippedCount)
	for _, c := range s.TestCases {
		fmt.Fprintf(&b, "<testcase classname=%s name=%s time=\"%g\"", attr(c.Classname), attr(c.Name), c.ExecutionTime)
		if c.File != "" {
			fmt.Fprintf(&b, " file=%s", attr(c.File))
		}
		message, text := systemOutput(c.SystemOutput)
		if c.StackTrace != "" {
			text = strings.TrimRight(text, "\n") + "\n" + c.StackTrace
		}
		switch c.Status {
		case "failed", "error":
			el := "failure"
			if c.Status == "error" {
				el = "error"
			}
			fmt.Fprintf(&b, ">\n<%s", el)
			if message != "" {
				fmt.Fprintf(&b, " message=%s", attr(message))
			}
			fmt.Fprintf(&b, ">%s</%s>\n</testcase>\n", chardata(text), el)
		case "skipped":
			b.WriteString("><skipped/></testcase>\n")
		default:
			b.WriteString("/>\n")
		}
	}
	b.WriteString("</testsuite>\n</testsuites>\n")
	return b.Bytes()
}

// systemOutput reads what GitLab kept of a failure: its text, or, for one
// without text, its attributes (message, type); a list of texts is joined.
func systemOutput(v any) (message, text string) {
	switch x := v.(type) {
	case string:
		return "", x
	case map[string]any:
		if m, ok := x["message"].(string); ok {
			message = m
		}
		for _, k := range []string{"__content__", "content", "text"} {
			if t, ok := x[k].(string); ok {
				text = t
			}
		}
		if message == "" && text == "" {
			if t, ok := x["type"].(string); ok {
				message = t
			}
		}
		return message, text
	case []any:
		var parts []string
		for _, e := range x {
			_, t := systemOutput(e)
			if t != "" {
				parts = append(parts, t)
			}
		}
		return "", strings.Join(parts, "\n")
	}
	return "", ""
}

// attr is s as a quoted XML attribute value.
func attr(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	_ = xml.EscapeText(&b, []byte(s))
	b.WriteByte('"')
	return b.String()
}

// chardata is s escaped as XML text.
func chardata(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

var xmlDecl = regexp.MustCompile(`^\s*<\?xml[^>]*\?>`)

// mergeJUnit puts several JUnit documents under one <testsuites>.
func mergeJUnit(docs [][]byte) []byte {
	if len(docs) == 1 {
		return docs[0]
	}
	var b bytes.Buffer
	b.WriteString("<testsuites>\n")
	for _, d := range docs {
		b.Write(xmlDecl.ReplaceAll(d, nil))
		b.WriteString("\n")
	}
	b.WriteString("</testsuites>\n")
	return b.Bytes()
}
