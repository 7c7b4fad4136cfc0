package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/app"
)

func TestRunUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := program.Run(context.Background(), nil, &out, &errOut); app.ExitCode(err) != 2 || !strings.Contains(errOut.String(), "usage: bot") {
		t.Fatalf("no command: %v, stderr %q", err, errOut.String())
	}
	errOut.Reset()
	if err := program.Run(context.Background(), []string{"frobnicate"}, &out, &errOut); app.ExitCode(err) != 2 || !strings.Contains(err.Error(), "frobnicate") {
		t.Fatalf("unknown command: %v", err)
	}
	if err := program.Run(context.Background(), []string{"help"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "commands:") {
		t.Fatalf("help: %v, stdout %q", err, out.String())
	}
}

func TestUsageNamesTheDemoLanguages(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := program.Run(context.Background(), []string{"help"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "--lang go|python|typescript|javascript") {
		t.Fatalf("help: %v, stdout %q", err, out.String())
	}
	err := program.Run(context.Background(), []string{"demo", "--lang", "ruby", "--out", t.TempDir()}, &out, &errOut)
	if app.ExitCode(err) != 2 || !strings.Contains(err.Error(), "choices: go, python, typescript, javascript") {
		t.Fatalf("bot demo --lang ruby: %v", err)
	}
}
