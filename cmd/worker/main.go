// Command worker is redfix's repair worker: it consumes jobs from NATS and
// runs the agent, the gates, the judge and the publisher on each.
// `worker repair` is the one-shot repair of a local clone; `worker tool` runs
// one of the agent's actions by hand; `worker mine` and `worker bench`
// measure it on a repository's own history.
package main

import (
	"github.com/redfix/redfix/internal/cli"
	"github.com/redfix/redfix/pkg/app"
)

var program = cli.Program{
	Name: "worker",
	Commands: []cli.Command{
		{Name: "run", Summary: "consume repair jobs from the queue", Run: app.WorkerRun},
		{Name: "repair", Summary: "repair a local clone whose HEAD fails a test, without any server", Run: app.Repair},
		{Name: "validate", Summary: "run every gate (and the judge, with a model) on a patch against a\nclone's HEAD; exit 0 accepted, 1 rejected, 2 usage or machinery error", Run: app.Validate},
		{Name: "judge-eval", Summary: "the configured judge on a labelled set of patches: precision and\nrecall on the accept class, with the confusion matrix", Run: app.JudgeEval},
		{Name: "seed", Summary: "build the sandbox's seed, the Go build cache each repository's new\ncache starts from (otherwise built by the first run that needs it)", Run: app.Seed},
		{Name: "tool", Summary: "run one of the agent's actions on a clone and print its observation", Run: app.Tool},
		{Name: "mine", Summary: "find past bug fixes in a clone's history whose tests fail without\nthem, and write them as tasks for bench", Run: app.Mine},
		{Name: "bench", Summary: "replay tasks through the agent and the gates without publishing:\nsolve rate, precision of what would have been published, cost", Run: app.Bench},
	},
	Usage:    app.Usage,
	ExitCode: app.ExitCode,
}

func main() { program.Main() }
