// Package cli is what redfix's two programs share around their commands:
// choosing the command from the first argument, the usage text made from
// the commands' summaries, signals, and how an error ends the process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Command is one subcommand: its name, a summary for the usage text (its
// lines after the first indented under it), and what runs it with the
// arguments after its name.
type Command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// Program is a command-line program made of commands.
type Program struct {
	Name     string
	Commands []Command
	// Usage makes the error of a command line that names no command or an
	// unknown one; ExitCode is the process's exit code for an error.
	Usage    func(msg string) error
	ExitCode func(error) int
}

// Run runs the command args name; help, -h and --help print the usage.
func (p Program) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, p.usage())
		return p.Usage("no command")
	}
	for _, c := range p.Commands {
		if c.Name == args[0] {
			return c.Run(ctx, args[1:], stdout, stderr)
		}
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, p.usage())
		return nil
	}
	fmt.Fprint(stderr, p.usage())
	return p.Usage("unknown command " + args[0])
}

// usage lists the commands with their summaries in a column.
func (p Program) usage() string {
	const col = 11
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s <command> [flags]\n\ncommands:\n", p.Name)
	for _, c := range p.Commands {
		lines := strings.Split(c.Summary, "\n")
		if len(c.Name) < col-2 {
			fmt.Fprintf(&b, "  %-*s%s\n", col-2, c.Name, lines[0])
		} else {
			fmt.Fprintf(&b, "  %s\n%s%s\n", c.Name, strings.Repeat(" ", col), lines[0])
		}
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "%s%s\n", strings.Repeat(" ", col), l)
		}
	}
	fmt.Fprintf(&b, "\nRun \"%s <command> -h\" for a command's flags.\n", p.Name)
	return b.String()
}

// Main runs the program on the process's arguments until SIGINT or
// SIGTERM, and exits with the error's code. An error is printed without
// control characters: errors quote the repositories' text (test names,
// git's output).
func (p Program) Main() {
	if untrusted.Trusting {
		fmt.Fprintf(os.Stderr, "%s: WARNING: built with redfix_trusting: checkouts are trusted, for the hostile tests only\n", p.Name)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := p.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if code := p.Report(err, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// Report prints how a command ended, when it failed, and returns the
// process's exit code (0 for no error). An error is printed without
// control characters, prefixed with the program's name; one the command's
// JSON log holds already (its Logged method says so) is not printed again
// as a plain line among the JSON ones.
func (p Program) Report(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var logged interface{ Logged() bool }
	if !errors.As(err, &logged) || !logged.Logged() {
		fmt.Fprintf(stderr, "%s: %s\n", p.Name, termsafe.String(err.Error()))
	}
	return p.ExitCode(err)
}
