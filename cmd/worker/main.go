// Command worker is redfix's repair worker: it consumes jobs from NATS and
// runs the agent, the gates, the judge and the publisher on each.
// `worker repair` is the one-shot repair of a local clone; `worker tool` runs
// one of the agent's actions by hand; `worker mine` and `worker bench`
// measure it on a repository's own history.
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
		fmt.Fprintln(os.Stderr, "worker: WARNING: built with redfix_trusting: checkouts are trusted, for the hostile tests only")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		// Errors quote the repository's text (test names, git's output).
		fmt.Fprintln(os.Stderr, "worker:", termsafe.String(err.Error()))
		os.Exit(app.ExitCode(err))
	}
}

const usage = `usage: worker <command> [flags]

commands:
  run      consume repair jobs from the queue
  repair   repair a local clone whose HEAD fails a test, without any server
  validate run every gate (and the judge, with a model) on a patch against a
           clone's HEAD; exit 0 accepted, 1 rejected, 2 usage or machinery error
  judge-eval  the configured judge on a labelled set of patches: precision and
           recall on the accept class, with the confusion matrix
  tool        run one of the agent's actions on a clone and print its observation
  mine        find past bug fixes in a clone's history whose tests fail without
           them, and write them as tasks for bench
  bench       replay tasks through the agent and the gates without publishing:
           solve rate, precision of what would have been published, cost

Run "worker <command> -h" for a command's flags.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return app.Usage("no command")
	}
	switch args[0] {
	case "run":
		return app.WorkerRun(ctx, args[1:], stdout, stderr)
	case "repair":
		return app.Repair(ctx, args[1:], stdout, stderr)
	case "validate":
		return app.Validate(ctx, args[1:], stdout, stderr)
	case "judge-eval":
		return app.JudgeEval(ctx, args[1:], stdout, stderr)
	case "tool":
		return app.Tool(ctx, args[1:], stdout, stderr)
	case "mine":
		return app.Mine(ctx, args[1:], stdout, stderr)
	case "bench":
		return app.Bench(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return app.Usage("unknown command " + args[0])
}
