package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	errUsage := errors.New("usage")
	var got []string
	p := Program{
		Name: "tool",
		Commands: []Command{
			{Name: "go", Summary: "do it", Run: func(_ context.Context, args []string, _, _ io.Writer) error {
				got = args
				return nil
			}},
			{Name: "long-command", Summary: "first line\nsecond line", Run: nil},
		},
		Usage:    func(msg string) error { return errors.Join(errUsage, errors.New(msg)) },
		ExitCode: func(error) int { return 2 },
	}
	var out, errOut bytes.Buffer
	if err := p.Run(context.Background(), []string{"go", "-x", "y"}, &out, &errOut); err != nil || strings.Join(got, " ") != "-x y" {
		t.Errorf("go: err %v, args %q", err, got)
	}
	if err := p.Run(context.Background(), []string{"nope"}, &out, &errOut); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "unknown command nope") {
		t.Errorf("an unknown command: %v", err)
	}
	if err := p.Run(context.Background(), nil, &out, &errOut); !errors.Is(err, errUsage) {
		t.Errorf("no command: %v", err)
	}
	out.Reset()
	if err := p.Run(context.Background(), []string{"help"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	want := "usage: tool <command> [flags]\n\ncommands:\n  go       do it\n  long-command\n           first line\n           second line\n\nRun \"tool <command> -h\" for a command's flags.\n"
	if out.String() != want {
		t.Errorf("usage:\n%s\nwant:\n%s", out.String(), want)
	}
}

type loggedErr struct{ error }

func (loggedErr) Logged() bool { return true }

// A failure is printed on a plain line with the program's name, except one
// the command's JSON log holds already: under log.format json it would be
// the one plain line among JSON ones.
func TestReportLeavesLoggedErrorsToTheLog(t *testing.T) {
	p := Program{Name: "bot", ExitCode: func(error) int { return 1 }}
	var b strings.Builder
	if code := p.Report(nil, &b); code != 0 || b.Len() != 0 {
		t.Fatalf("no error: %d %q", code, b.String())
	}
	if code := p.Report(errors.New("redis at r:6379: connection refused"), &b); code != 1 || b.String() != "bot: redis at r:6379: connection refused\n" {
		t.Fatalf("an error: %d %q", code, b.String())
	}
	b.Reset()
	err := fmt.Errorf("serve: %w", loggedErr{errors.New("redis at r:6379: connection refused")})
	if code := p.Report(err, &b); code != 1 || b.Len() != 0 {
		t.Fatalf("a logged error: %d %q, want its code and nothing printed", code, b.String())
	}
}
