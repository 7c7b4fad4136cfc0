package toylang

import (
	"fmt"
	"strconv"
	"strings"
)

// maxFile bounds a .toy file read from a checkout.
const maxFile = 1 << 20

// def is a definition ("def add x y = x + y") or a case ("case add 40 2 =
// 42") of a file of code.
type def struct {
	name   string
	params []string // a case's are its arguments
	expr   []string // the expression's tokens; a case's is its value
	isCase bool
	line   int
	text   string
}

// test is a test of a file of tests.
type test struct {
	name    string
	line    int
	skip    bool
	expects []expect
}

// expect is "expect NAME ARGS... = WANT".
type expect struct {
	fn   string
	args []int
	want int
	line int
	text string
}

// parseErr is a line the format does not read.
type parseErr struct {
	line int
	msg  string
}

// file is what a .toy file holds.
type file struct {
	defs  []def
	tests []test
	errs  []parseErr
}

// parseFile reads a .toy file (rel names it: a file of tests or of code).
func parseFile(rel, src string) file {
	var f file
	isTest := strings.HasSuffix(rel, "_test.toy")
	for i, raw := range strings.Split(src, "\n") {
		n := i + 1
		l := raw
		if j := strings.IndexByte(l, '#'); j >= 0 {
			l = l[:j]
		}
		fields := strings.Fields(l)
		if len(fields) == 0 {
			continue
		}
		var err error
		if isTest {
			err = f.testLine(fields, n, strings.TrimSpace(l))
		} else {
			err = f.codeLine(fields, n, strings.TrimSpace(l))
		}
		if err != nil {
			f.errs = append(f.errs, parseErr{n, err.Error()})
		}
	}
	return f
}

// codeLine reads a definition or a case.
func (f *file) codeLine(fields []string, n int, text string) error {
	head, expr, ok := cutEq(fields)
	if !ok || len(head) < 2 || head[0] != "def" && head[0] != "case" {
		return fmt.Errorf("want def NAME PARAMS... = EXPR or case NAME ARGS... = VALUE")
	}
	d := def{name: head[1], params: head[2:], expr: expr, isCase: head[0] == "case", line: n, text: text}
	if d.isCase && (len(expr) != 1 || !isInt(expr[0])) {
		return fmt.Errorf("a case's value is one integer")
	}
	f.defs = append(f.defs, d)
	return nil
}

// testLine reads a test's line.
func (f *file) testLine(fields []string, n int, text string) error {
	switch fields[0] {
	case "test":
		if len(fields) != 2 {
			return fmt.Errorf("want test NAME")
		}
		f.tests = append(f.tests, test{name: fields[1], line: n})
		return nil
	case "skip", "expect":
		if len(f.tests) == 0 {
			return fmt.Errorf("%s outside a test", fields[0])
		}
	default:
		return fmt.Errorf("want test, expect or skip")
	}
	t := &f.tests[len(f.tests)-1]
	if fields[0] == "skip" {
		t.skip = true
		return nil
	}
	head, want, ok := cutEq(fields[1:])
	if !ok || len(head) == 0 || len(want) != 1 || !isInt(want[0]) {
		return fmt.Errorf("want expect NAME ARGS... = VALUE")
	}
	e := expect{fn: head[0], line: n, text: text}
	e.want, _ = strconv.Atoi(want[0])
	for _, a := range head[1:] {
		v, err := strconv.Atoi(a)
		if err != nil {
			return fmt.Errorf("an argument is an integer: %s", a)
		}
		e.args = append(e.args, v)
	}
	t.expects = append(t.expects, e)
	return nil
}

// cutEq splits fields at the one "=".
func cutEq(fields []string) (before, after []string, ok bool) {
	for i, f := range fields {
		if f == "=" {
			return fields[:i], fields[i+1:], len(fields[i+1:]) > 0
		}
	}
	return nil, nil, false
}

func isInt(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
