package offline_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// The offline policy's figures on failures without a blame commit: each
// scenario of testdata/noblame is a module at one commit, with a
// single-token bug in a file other than the failing test's, and no blame
// commit for the policy to lean on.

// BenchmarkOfflineNoBlame runs the offline policy on each no-blame case and
// prints a table: which it fixed (the failing test passes and no test of
// the module fails after its patch), in how many steps, and why it
// stopped. Run it with
//
//	go test -run '^$' -bench OfflineNoBlame -benchtime 1x -v ./pkg/harness/offline
//
// (-bench 'OfflineNoBlame/NAME' runs one case; REDFIX_FIGURES_LOG=1 logs
// the policy's steps).
func BenchmarkOfflineNoBlame(b *testing.B) {
	var rows []string
	fixed, ran := 0, 0
	for _, c := range loadScenarios(b, "noblame") {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ok, row := runNoBlame(b, c)
				if i == 0 {
					ran++
					if ok {
						fixed++
					}
					rows = append(rows, row)
				}
				b.ReportMetric(map[bool]float64{true: 1}[ok], "fixed")
			}
		})
	}
	b.Logf("offline policy on %d single-token failures without a blame commit:\n%-22s %-6s %5s  %-9s %s\n%s\nfixed %d of %d",
		ran, "case", "fixed", "steps", "stop", "time", strings.Join(rows, "\n"), fixed, ran)
}

func runNoBlame(b *testing.B, c scenario) (bool, string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	start := time.Now()
	dir, shas := c.repo(b, ctx, "Add "+c.name)
	head := shas[0]
	runner := golang.Driver{Tests: golang.Runner{Timeout: 2 * time.Minute}}
	out, err := runner.Run(ctx, dir, []string{c.failing}, 1)
	if err != nil {
		b.Fatal(err)
	}
	if len(out.Failed) == 0 {
		b.Fatalf("%s: %s does not fail: %s", c.name, c.failing, out.Summary())
	}
	tk := task.Task{
		ID: "figures-" + c.name, Repo: dir, Commit: head, Failures: out.Failed,
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
		Status:    task.StatusRunning,
	}
	ws, err := workspace.Open(ctx, dir, head, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	log := zap.NewNop()
	if os.Getenv("REDFIX_FIGURES_LOG") != "" {
		log = zaptest.NewLogger(b)
	}
	h := harness.New(harness.Config{MaxSteps: maxSteps}, newPolicy(log), runner, nil, log)
	res, err := h.Run(ctx, ws, tk, nil)
	stop := res.Stop
	if err != nil {
		stop = "error"
	}
	ok := false
	if res.Patch != "" && !strings.Contains(res.Patch, "_test.go") {
		after, err := runner.Run(ctx, ws.Dir, []string{c.failing}, 1)
		all, err2 := runner.RunPackages(ctx, ws.Dir, []string{"./..."})
		ok = err == nil && err2 == nil && after.OK() && all.OK()
	}
	return ok, fmt.Sprintf("%-22s %-6v %5d  %-9s %s", c.name, ok, res.Steps, stop, time.Since(start).Round(time.Second))
}
