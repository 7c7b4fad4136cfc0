// Command bot is redfix's triage service: it takes CI test reports over
// HTTP, triages them and queues repair jobs. `bot demo` runs the whole path
// in one process; `bot triage` is the one-shot triage of a local clone.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/redfix/redfix/pkg/app"
	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/untrusted"
)

func main() {
	if untrusted.Trusting {
		fmt.Fprintln(os.Stderr, "bot: WARNING: built with redfix_trusting: checkouts are trusted, for the hostile tests only")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		// Errors quote the repository's text (test names, git's output).
		fmt.Fprintln(os.Stderr, "bot:", termsafe.String(err.Error()))
		os.Exit(app.ExitCode(err))
	}
}

const usage = `usage: bot <command> [flags]

commands:
  serve    run the triage service: ingest API, triage loop, dashboard, metrics
  demo     build a sample repository and repair its CI failure end to end;
           --lang go|python chooses the sample (go by default),
           --serve ADDR keeps the bot and its dashboard up afterwards
  triage   reproduce, measure flakiness and bisect a failing test in a local clone
  replay   list or replay reports and jobs parked after their last retry
  bench-bisect
           the bisection benchmark: noisy search against plain bisection on
           simulated histories, as a table

Run "bot <command> -h" for a command's flags.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return app.Usage("no command")
	}
	switch args[0] {
	case "serve":
		return app.Serve(ctx, args[1:], stdout, stderr)
	case "demo":
		return app.Demo(ctx, args[1:], stdout, stderr)
	case "triage":
		return app.TriageCommand(ctx, args[1:], stdout, stderr)
	case "replay":
		return app.Replay(ctx, args[1:], stdout, stderr)
	case "bench-bisect":
		return app.BenchBisect(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return app.Usage("unknown command " + args[0])
}
