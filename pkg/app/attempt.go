package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/redact"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/worker"
)

// attempt is what `worker repair` tried, written under --out whatever the
// outcome: report.md for people, trajectory.jsonl for the agent's steps.
// Outside text goes into report.md as code or escaped prose (package
// markdown), as in a pull request's body.
type attempt struct {
	dir     string
	started time.Time
	notes   []string
	task    *task.Task
	outcome *worker.Outcome
	err     error
	red     *redact.Redactor // what is written goes through it
}

func (a *attempt) note(format string, args ...any) {
	a.notes = append(a.notes, fmt.Sprintf(format, args...))
}

// write writes report.md and, when the agent ran, trajectory.jsonl.
func (a *attempt) write() error {
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return fmt.Errorf("make %s: %w", a.dir, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# redfix repair attempt\n\n")
	if t := a.task; t != nil {
		fmt.Fprintf(&b, "Repository %s at %s.\n\n## Failing tests\n\n", markdown.Code(t.Repo), markdown.Code(task.Short(t.Commit)))
		for _, f := range t.Failures {
			fmt.Fprintf(&b, "- %s: %s\n", markdown.Code(f.ID()), markdown.Text(oneLine(f.Message, 300)))
		}
		if len(t.FlakinessByTest) > 0 {
			b.WriteString("\nRe-runs at the failing commit:\n\n")
			for _, e := range t.FlakinessByTest {
				fmt.Fprintf(&b, "- %s: failed %d of %d runs (%s)\n", markdown.Code(e.Test), e.Failures, e.Runs, markdown.Text(e.Verdict))
			}
		}
	}
	if len(a.notes) > 0 {
		b.WriteString("\n## Triage\n\n")
		for _, n := range a.notes {
			fmt.Fprintf(&b, "- %s\n", markdown.Text(n))
		}
	}
	b.WriteString("\n## Outcome\n\n")
	if o := a.outcome; o != nil {
		fmt.Fprintf(&b, "Stopped: %s\n\n", markdown.Text(stopLine(*o)))
		if a.err != nil {
			b.WriteString("Error:\n\n" + markdown.CodeBlock("text", clip.Middle(a.err.Error(), 16<<10)))
		}
		r := o.Agent
		fmt.Fprintf(&b, "The agent took %d steps and stopped by %s.\n\n", r.Steps, markdown.Text(strconv.Quote(orNone(r.Stop))))
		if s := strings.TrimSpace(r.Summary); s != "" {
			b.WriteString("Its summary:\n\n" + markdown.CodeBlock("text", clip.Middle(s, 8<<10)))
		}
		if len(o.Gates) > 0 {
			b.WriteString("Gates:\n\n")
			for _, g := range o.Gates {
				fmt.Fprintf(&b, "- %s: %s: %s\n", markdown.Text(g.Name), markdown.Text(g.Verdict), markdown.Text(oneLine(g.Detail, 400)))
			}
			b.WriteString("\n")
		} else {
			b.WriteString("No gate ran.\n\n")
		}
		if p := strings.TrimSpace(r.Patch); p != "" {
			b.WriteString("The agent's last patch:\n\n" + markdown.CodeBlock("diff", clip.Middle(p, 32<<10)))
		}
		if len(o.Trajectory) > 0 {
			if err := os.WriteFile(filepath.Join(a.dir, "trajectory.jsonl"), a.red.JSONLines(o.Trajectory), 0o644); err != nil {
				return fmt.Errorf("write the trajectory: %w", err)
			}
			b.WriteString("\nEvery step is in trajectory.jsonl.\n")
		}
	}
	fmt.Fprintf(&b, "\nTook %s.\n", time.Since(a.started).Round(time.Second))
	if err := os.WriteFile(filepath.Join(a.dir, "report.md"), []byte(a.red.String(b.String())), 0o644); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}

// stopLine says in one line why a repair stopped.
func stopLine(o worker.Outcome) string {
	switch {
	case o.Status == task.StatusPublished:
		return "published " + o.PullRequest
	case o.Status == "" && o.Agent.Stop == "":
		return "the agent did not run"
	case o.Status == "":
		return fmt.Sprintf("the agent stopped (%s) after %d steps", o.Agent.Stop, o.Agent.Steps)
	}
	reason := o.Reason
	if reason == "" {
		reason = string(o.Status)
	}
	return oneLine(reason, 300)
}

// oneLine joins text's lines into one and caps it at n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
