package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/task"
)

// GetTaskDetails is the tool that shows the task.
const GetTaskDetails = "get_task_details"

// GetTaskDetailsArgs are get_task_details' arguments: none.
type GetTaskDetailsArgs struct{}

//go:embed get_task_details.md
var getTaskDetailsDoc string

var getTaskDetailsTool = Define(GetTaskDetails, KindTask, getTaskDetailsDoc, (*Session).getTaskDetails)

// detailedFailures is how many failures get_task_details shows with their
// output; the others are shown by message and frames.
const detailedFailures = 3

func (s *Session) getTaskDetails(context.Context, GetTaskDetailsArgs) (Observation, error) {
	t := s.t
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s: %s\n", t.ID, t.Title())
	fmt.Fprintf(&b, "Repository: %s at commit %s", t.Repo, task.Short(t.Commit))
	if t.Branch != "" {
		fmt.Fprintf(&b, " (branch %s)", t.Branch)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "Failing tests (%d):\n", len(t.Failures))
	for i, f := range t.Failures {
		fmt.Fprintf(&b, "%d. %s\n", i+1, f.ID())
		if f.Message != "" {
			fmt.Fprintf(&b, "   message: %s\n", f.Message)
		}
		if len(f.Frames) > 0 {
			fmt.Fprintf(&b, "   stack frames: %s\n", strings.Join(f.Frames, ", "))
		}
		if i == detailedFailures {
			b.WriteString("   (output left out from here on; run_tests shows it)\n")
		}
		if out := strings.TrimSpace(f.Output); out != "" && i < detailedFailures {
			b.WriteString("   output:\n")
			b.WriteString(indent(trimLines(out, failureLines), "     "))
			b.WriteString("\n")
		}
	}
	fl := t.Flakiness
	b.WriteString("\nFlakiness: ")
	switch {
	case len(t.FlakinessByTest) > 0:
		b.WriteString("re-runs at the failing commit, test by test:\n")
		for _, e := range t.FlakinessByTest {
			fmt.Fprintf(&b, "  %s: failed %d of %d runs (%s)\n", e.Test, e.Failures, e.Runs, e.Verdict)
		}
	case fl.Runs == 0:
		b.WriteString("not measured\n")
	default:
		fmt.Fprintf(&b, "failed %d of %d reruns (%s)\n", fl.Failures, fl.Runs, fl.Verdict)
	}
	bs := t.Bisection
	b.WriteString("Bisection: ")
	if bs.Blame == "" {
		b.WriteString("no blamed commit\n")
	} else {
		fmt.Fprintf(&b, "commit %s", task.Short(bs.Blame))
		if bs.Subject != "" {
			fmt.Fprintf(&b, " %q", bs.Subject)
		}
		if bs.Author != "" {
			fmt.Fprintf(&b, " by %s", bs.Author)
		}
		fmt.Fprintf(&b, " broke the tests (last good %s, first bad %s, %s tested). Use get_diff_details to see it.\n",
			task.Short(bs.Good), task.Short(bs.Bad), plural(bs.Steps, "commit", "commits"))
	}
	return Observation{Content: b.String()}, nil
}
