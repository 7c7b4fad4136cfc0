package triage

import (
	"context"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/task"
)

// CheckName is the check run that shows triage's verdict on the red
// commit, where the person looking at the red build sees it.
const CheckName = "redfix / triage"

// Verdicts shows what triage decided for a report's failure groups where
// the repository's people look (a check run on the red commit). It is
// told after the groups are decided and cannot fail the report: a verdict
// that could not be shown is the implementation's to log.
type Verdicts interface {
	Decided(ctx context.Context, repo string, outs []Outcome)
}

// maxShownTests bounds the tests named in a group's heading, and
// maxShownMessage the bytes of each failure's message.
const (
	maxShownTests   = 5
	maxShownMessage = 300
)

// CheckText is the title and Markdown summary of the check run on a red
// commit whose failure groups became tasks: for each, the failing tests,
// the re-runs' verdict (reliable or flaky, with their counts), the culprit
// with bisection's confidence, and what came of it: a repair under way, the
// fix or revert pull request (with its state, from fixes, keyed by URL), or
// why nothing is done. The title holds no text from outside redfix; in the
// summary, every such text (test names, messages, commit subjects and
// authors, reasons that quote them) is code or escaped prose
// (pkg/markdown): it cannot mention anyone, link, or break out.
func CheckText(tasks []task.Task, fixes map[string]task.Fix) (title, summary string) {
	var b strings.Builder
	heads := make([]string, 0, len(tasks))
	for i, t := range tasks {
		if i > 0 {
			b.WriteString("\n")
		}
		heads = append(heads, headline(t, fixes))
		writeGroup(&b, t, fixes)
	}
	b.WriteString("\nThis check is neutral: it never passes or fails the commit; it says what redfix found and did.\n")
	switch len(tasks) {
	case 0:
		return "No failure group", b.String()
	case 1:
		return heads[0], b.String()
	}
	return fmt.Sprintf("%d failure groups: %s", len(tasks), countHeadlines(heads)), b.String()
}

// maxShownOutputLines bounds each failing test's output in the details.
const maxShownOutputLines = 30

// CheckDetails is the check run's longer text: the end of each failing
// test's output, as code (its text cannot act), by group; "" when no
// failure kept any output.
func CheckDetails(tasks []task.Task) string {
	var b strings.Builder
	for _, t := range tasks {
		for _, f := range t.Failures[:min(len(t.Failures), maxShownTests)] {
			out := lastLines(f.Output, maxShownOutputLines)
			if out == "" {
				continue
			}
			fmt.Fprintf(&b, "#### %s\n\n%s", markdown.Code(f.ID()), markdown.CodeBlock("text", out))
		}
	}
	return b.String()
}

// lastLines is the last n lines of s, saying how many came before.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("… (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// writeGroup is one task's part of the summary.
func writeGroup(b *strings.Builder, t task.Task, fixes map[string]task.Fix) {
	tests := t.Tests()
	shown := make([]string, 0, min(len(tests), maxShownTests))
	for _, id := range tests[:min(len(tests), maxShownTests)] {
		shown = append(shown, markdown.Code(id))
	}
	head := strings.Join(shown, ", ")
	if n := len(tests) - len(shown); n > 0 {
		head += fmt.Sprintf(" and %d more", n)
	}
	if head == "" {
		head = "Failing tests"
	}
	fmt.Fprintf(b, "#### %s\n\n", head)
	for _, f := range t.Failures[:min(len(t.Failures), maxShownTests)] {
		if f.Message != "" {
			fmt.Fprintf(b, "- %s: %s\n", markdown.Code(f.ID()), markdown.Text(cut(f.Message, maxShownMessage)))
		}
	}
	if fl := t.Flakiness; fl.Runs > 0 {
		fmt.Fprintf(b, "- **Re-runs:** %s: %d of %d failed at this commit.\n", markdown.Text(fl.Verdict), fl.Failures, fl.Runs)
	}
	if bis := t.Bisection; bis.Blame != "" {
		line := "- **Culprit:** " + markdown.Code(task.Short(bis.Blame))
		if bis.Subject != "" {
			line += " " + markdown.Text(cut(bis.Subject, maxShownMessage))
		}
		if bis.Author != "" {
			line += ", by " + markdown.Text(bis.Author)
		}
		if bis.Confidence > 0 {
			line += fmt.Sprintf(", found by bisection with confidence %.0f%% in %d test runs", bis.Confidence*100, bis.Steps)
			if bis.CachedRuns > 0 {
				line += fmt.Sprintf(" and %d reused from earlier searches", bis.CachedRuns)
			}
		}
		if e := bis.EvidenceText(); e != "" {
			line += "; " + e
		}
		b.WriteString(line + ".\n")
	} else if bis.Finding != "" {
		fmt.Fprintf(b, "- **Culprit:** none named (bisection's finding: %s).\n", markdown.Text(bis.Finding))
	}
	b.WriteString("- **Outcome:** " + outcome(t, fixes) + "\n")
	fmt.Fprintf(b, "- Task %s, failure group %s.\n", markdown.Code(t.ID), markdown.Code(cut(t.Fingerprint, 16)))
}

// outcome is what came of t, in Markdown.
func outcome(t task.Task, fixes map[string]task.Fix) string {
	switch t.Status {
	case task.StatusQueued:
		return "a repair is queued."
	case task.StatusRunning:
		return "a worker is repairing it."
	case task.StatusPublished:
		if t.PullRequest == "" {
			return "a fix was published."
		}
		kind, state := pullOf(t, fixes)
		return fmt.Sprintf("[the %s pull request](%s), %s.", kind, markdown.Dest(t.PullRequest), state)
	case task.StatusNoPatch:
		return "no patch passed the gates: " + markdown.Text(cut(t.Reason, maxShownMessage))
	case task.StatusFailed:
		return "the repair stopped on an error: " + markdown.Text(cut(t.Reason, maxShownMessage))
	case task.StatusOverBudget:
		return "the repair ran out of the repository's model budget: " + markdown.Text(cut(t.Reason, maxShownMessage))
	case task.StatusDropped:
		return "not repaired: " + markdown.Text(cut(t.Reason, maxShownMessage))
	}
	return markdown.Text(string(t.Status)) + "."
}

// pullOf is the kind of t's pull request (fix or revert) and where it
// stands, as far as fixes tell.
func pullOf(t task.Task, fixes map[string]task.Fix) (kind, state string) {
	kind = task.KindFix
	if strings.HasPrefix(t.Reason, "reverted the culprit") {
		kind = task.KindRevert
	}
	f, ok := fixes[t.PullRequest]
	if !ok {
		return kind, "open"
	}
	if f.Kind != "" {
		kind = f.KindOf()
	}
	switch f.State {
	case task.FixLanded, task.FixLandedWithEdits:
		return kind, "merged"
	case task.FixClosed:
		return kind, "closed without merging"
	}
	return kind, "open"
}

// headline is t's verdict in a few words of redfix's own, for the title.
func headline(t task.Task, fixes map[string]task.Fix) string {
	switch t.Status {
	case task.StatusQueued, task.StatusRunning:
		return "a repair is under way"
	case task.StatusPublished:
		kind, state := pullOf(t, fixes)
		return fmt.Sprintf("%s pull request %s", kind, state)
	case task.StatusNoPatch:
		return "no fix passed the gates"
	case task.StatusFailed, task.StatusOverBudget:
		return "the repair stopped"
	}
	switch ReasonClass(t.Reason) {
	case ReasonFlaky:
		return "flaky: not repaired"
	case ReasonNotReproduced:
		return "does not reproduce: not repaired"
	case ReasonDuplicate, ReasonSameBlame, ReasonEndedUnfixed:
		return "already in hand in another task"
	case ReasonOptedOut:
		return "not repaired: the repository opted out"
	case ReasonFork:
		return "not repaired: pull requests from forks are not handled"
	case ReasonBudget:
		return "not repaired today: the daily limit is reached"
	case ReasonFixed:
		return "already fixed on the default branch"
	case ReasonHumanFix:
		return "a person's pull request is in flight"
	case ReasonCannotRun:
		return "not repaired: the tests cannot run here"
	case ReasonBeyondCap:
		return "not repaired: beyond the groups triaged per report"
	}
	return "not repaired"
}

// countHeadlines is heads counted, in their first order: "2 × flaky:
// not repaired, fix pull request open".
func countHeadlines(heads []string) string {
	var order []string
	n := map[string]int{}
	for _, h := range heads {
		if n[h] == 0 {
			order = append(order, h)
		}
		n[h]++
	}
	parts := make([]string, len(order))
	for i, h := range order {
		parts[i] = h
		if n[h] > 1 {
			parts[i] = fmt.Sprintf("%d × %s", n[h], h)
		}
	}
	return strings.Join(parts, "; ")
}

// cut is s cut to n bytes on a rune boundary, with an ellipsis when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
