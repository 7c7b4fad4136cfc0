// Command testtime reads `go test -json` on its standard input and prints
// what `go test` would have printed without -json (each package's result,
// the output of the tests that failed, build errors), then the slowest
// tests and packages of the run: the suite's time budget, kept by a tool
// (docs/testing.md). The README's test command, which .ci/run runs, is go
// test piped through it:
//
//	go test -race -timeout 45m -json ./pkg/app ./test/hostile ./pkg/faults ./pkg/harness/offline ./... | go run ./internal/testtime
//
// Its status is the run's: 1 when a package failed or did not build, or
// when go test reported no package at all, else 0.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testtime", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 10, "how many of the slowest tests and packages to print")
	events := fs.String("events", "", "also copy the events read to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	in := stdin
	if *events != "" {
		f, err := os.Create(*events)
		if err != nil {
			fmt.Fprintf(stderr, "testtime: %v\n", err)
			return 1
		}
		defer f.Close()
		in = io.TeeReader(stdin, f)
	}
	tl, err := Read(in, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "testtime: read the test events: %v\n", err)
		return 1
	}
	tl.Print(stdout, *n)
	switch {
	case tl.Failed:
		return 1
	case len(tl.Packages) == 0:
		fmt.Fprintln(stderr, "testtime: the run reported no package")
		return 1
	}
	return 0
}
