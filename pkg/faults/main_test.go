package faults

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "redfix-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sampleDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
