// Command bot is redfix's triage service: it takes CI test reports over
// HTTP, triages them and queues repair jobs. `bot demo` runs the whole path
// in one process; `bot triage` is the one-shot triage of a local clone.
package main

import (
	"github.com/redfix/redfix/internal/cli"
	"github.com/redfix/redfix/pkg/app"
)

var program = cli.Program{
	Name: "bot",
	Commands: []cli.Command{
		{Name: "serve", Summary: "run the triage service: ingest API, triage loop, dashboard, metrics", Run: app.Serve},
		{Name: "demo", Summary: "build a sample repository and repair its CI failure end to end;\n--lang go|python|typescript|javascript chooses the sample (go by default),\n--serve ADDR keeps the bot and its dashboard up afterwards", Run: app.Demo},
		{Name: "triage", Summary: "reproduce, measure flakiness and bisect a failing test in a local clone", Run: app.TriageCommand},
		{Name: "replay", Summary: "list or replay reports and jobs parked after their last retry;\n--task ID starts a failure group over", Run: app.Replay},
		{Name: "bench-bisect", Summary: "the bisection benchmark: noisy search against plain bisection on\nsimulated histories, as a table", Run: app.BenchBisect},
		{Name: "bench-ingest", Summary: "the ingest benchmark: reports posted to the ingest API against the same\nbytes published straight to JetStream, on a nats-server and redis-server it starts", Run: app.BenchIngest},
	},
	Usage:    app.Usage,
	ExitCode: app.ExitCode,
}

func main() { program.Main() }
