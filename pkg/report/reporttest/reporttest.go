// Package reporttest makes large test reports for tests and benchmarks,
// generated where they are used so that no megabyte file is committed.
package reporttest

import (
	"bytes"
	"fmt"
)

// NestedJUnit is a JUnit report of about size bytes: a <testsuites>
// element holding blocks of <testsuite> elements nested depth deep (the
// last block less deep, to end near size). Each suite has a passing test
// case, and the innermost one a failing test case too, so every block is
// one failure of its own.
//
// A block is depth+3 elements deep (testsuites, the suites, a testcase,
// its failure). Deep blocks (thousands of levels) are the shape that made
// a parser building a node tree with each node's inner XML take gigabytes
// for a megabyte; shallow ones make a large valid report.
func NestedJUnit(size, depth int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<testsuites>\n")
	const end = "</testsuites>\n"
	var block bytes.Buffer
	for n := 0; n == 0 || b.Len()+len(end) < size; n++ {
		writeBlock(&block, n, depth)
		if room := size - b.Len() - len(end); block.Len() > room {
			writeBlock(&block, n, max(1, depth*room/block.Len()))
		}
		b.Write(block.Bytes())
	}
	b.WriteString(end)
	return b.Bytes()
}

// writeBlock writes block n, nested depth deep, over what buf held.
func writeBlock(buf *bytes.Buffer, n, depth int) {
	buf.Reset()
	for d := range depth {
		fmt.Fprintf(buf, `<testsuite name="suite%d.%d"><testcase classname="example.com/m/b%d/s%d" name="TestPass"/>`, n, d, n, d)
	}
	fmt.Fprintf(buf, `<testcase classname="example.com/m/b%d" name="TestFail"><failure message="block %d failed">x_test.go:3: block %d failed</failure></testcase>`, n, n, n)
	for range depth {
		buf.WriteString("</testsuite>")
	}
	buf.WriteString("\n")
}
