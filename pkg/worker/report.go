package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/redact"
	"github.com/redfix/redfix/pkg/task"
)

// RepairReport is what a one-shot repair (`worker repair`) tried, written
// in Dir whatever the outcome: report.md for people, trajectory.jsonl for
// the agent's steps. Outside text goes into report.md as code or escaped
// prose (package markdown), as in a pull request's body.
type RepairReport struct {
	Dir     string
	Started time.Time
	// Notes are what came before the repair (how the blame commit was
	// found), one line each.
	Notes []string
	// Task is the task repaired, once it is known; Outcome and Err what
	// the repair returned, once it ran.
	Task     *task.Task
	Outcome  *Outcome
	Err      error
	Redactor *redact.Redactor // what is written goes through it
}

// Note adds a line to the notes.
func (a *RepairReport) Note(format string, args ...any) {
	a.Notes = append(a.Notes, fmt.Sprintf(format, args...))
}

// Write writes report.md and, when the agent ran, trajectory.jsonl.
func (a *RepairReport) Write() error {
	if err := os.MkdirAll(a.Dir, 0o755); err != nil {
		return fmt.Errorf("make %s: %w", a.Dir, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# redfix repair attempt\n\n")
	if t := a.Task; t != nil {
		fmt.Fprintf(&b, "Repository %s at %s.\n\n## Failing tests\n\n", markdown.Code(t.Repo), markdown.Code(task.Short(t.Commit)))
		for _, f := range t.Failures {
			fmt.Fprintf(&b, "- %s: %s\n", markdown.Code(f.ID()), markdown.Text(clip.OneLine(f.Message, 300)))
		}
		if len(t.FlakinessByTest) > 0 {
			b.WriteString("\nRe-runs at the failing commit:\n\n")
			for _, e := range t.FlakinessByTest {
				fmt.Fprintf(&b, "- %s: failed %d of %d runs (%s)\n", markdown.Code(e.Test), e.Failures, e.Runs, markdown.Text(e.Verdict))
			}
		}
	}
	if len(a.Notes) > 0 {
		b.WriteString("\n## Triage\n\n")
		for _, n := range a.Notes {
			fmt.Fprintf(&b, "- %s\n", markdown.Text(n))
		}
	}
	b.WriteString("\n## Outcome\n\n")
	if o := a.Outcome; o != nil {
		fmt.Fprintf(&b, "Stopped: %s\n\n", markdown.Text(StopLine(*o)))
		if o.Status == task.StatusPublished && !task.Reviewed(o.Gates) {
			b.WriteString("Not reviewed by a model: no judge passed this patch (the offline policy wrote it, or no model was configured); it was published as a draft, labelled " + markdown.Code(publish.UnreviewedLabel) + ".\n\n")
		}
		if a.Err != nil {
			b.WriteString("Error:\n\n" + markdown.CodeBlock("text", clip.Middle(a.Err.Error(), 16<<10)))
		}
		r := o.Agent
		if o.Rounds > 0 {
			stop := r.Stop
			if mine := chosenRounds(*o); len(mine) > 0 {
				stop = mine[len(mine)-1].Stop
			}
			fmt.Fprintf(&b, "The agent took %d steps in all, over %d rounds; the last stopped by %s.\n\n", o.Steps, o.Rounds+1, markdown.Text(strconv.Quote(orNone(stop))))
		} else {
			fmt.Fprintf(&b, "The agent took %d steps and stopped by %s.\n\n", max(o.Steps, r.Steps), markdown.Text(strconv.Quote(orNone(r.Stop))))
		}
		if s := strings.TrimSpace(r.Summary); s != "" {
			b.WriteString("Its summary:\n\n" + markdown.CodeBlock("text", clip.Middle(s, 8<<10)))
		}
		if len(o.AllRounds) > 0 {
			writeRounds(&b, *o)
		} else {
			writeGates(&b, o.Gates)
			if p := strings.TrimSpace(r.Patch); p != "" {
				b.WriteString("The agent's last patch:\n\n" + markdown.CodeBlock("diff", clip.Middle(p, 32<<10)))
			}
		}
		if len(o.Trajectory) > 0 {
			if err := os.WriteFile(filepath.Join(a.Dir, "trajectory.jsonl"), a.Redactor.JSONLines(o.Trajectory), 0o644); err != nil {
				return fmt.Errorf("write the trajectory: %w", err)
			}
			b.WriteString("\nEvery step is in trajectory.jsonl.\n")
		}
	}
	fmt.Fprintf(&b, "\nTook %s.\n", time.Since(a.Started).Round(time.Second))
	if err := os.WriteFile(filepath.Join(a.Dir, "report.md"), []byte(a.Redactor.String(b.String())), 0o644); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}

// writeGates lists the gates' verdicts, or says none ran.
func writeGates(b *strings.Builder, gates []task.Gate) {
	if len(gates) == 0 {
		b.WriteString("No gate ran.\n\n")
		return
	}
	b.WriteString("Gates:\n\n")
	for _, g := range gates {
		fmt.Fprintf(b, "- %s: %s: %s\n", markdown.Text(g.Name), markdown.Text(g.Verdict), markdown.Text(clip.OneLine(g.Detail, 400)))
	}
	b.WriteString("\n")
}

// writeRounds gives each round of each candidate: its steps, how it ended,
// its gates and its patch.
func writeRounds(b *strings.Builder, o Outcome) {
	for _, r := range o.AllRounds {
		title := fmt.Sprintf("Round %d", r.N)
		if o.Candidates > 1 {
			title = fmt.Sprintf("Candidate %d, round %d", r.Candidate, r.N)
		}
		if r.N > 1 {
			title += " (a feedback round)"
		}
		fmt.Fprintf(b, "### %s: %s\n\n", title, markdown.Text(strings.ReplaceAll(r.Verdict, "_", " ")))
		ended := r.Reason
		if r.Verdict == task.RoundAccepted {
			ended = "every gate passed"
		}
		fmt.Fprintf(b, "%s, stopped by %s: %s.\n\n", plural(r.Steps, "step"), markdown.Text(strconv.Quote(orNone(r.Stop))), markdown.Text(clip.OneLine(ended, 600)))
		writeGates(b, r.Gates)
		if p := strings.TrimSpace(r.Patch); p != "" {
			b.WriteString("Its patch:\n\n" + markdown.CodeBlock("diff", clip.Middle(p, 32<<10)))
		}
	}
}

// chosenRounds are the chosen candidate's rounds.
func chosenRounds(o Outcome) []task.Round {
	var rs []task.Round
	for _, r := range o.AllRounds {
		if r.Candidate == o.Chosen {
			rs = append(rs, r)
		}
	}
	return rs
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// StopLine says in one line why a repair stopped.
func StopLine(o Outcome) string {
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
	return clip.OneLine(reason, 300)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
