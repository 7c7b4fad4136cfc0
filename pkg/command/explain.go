package command

import (
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/task"
)

// maxOutputLines bounds each failing test's output in an explanation.
const maxOutputLines = 20

// Explanation is the answer to /redfix explain: the triage evidence (the
// failing tests, their re-runs, the commit that broke them, the rules
// checked) and the gates' verdicts kept with the task. Every text that
// came from the repository, its tests or a model is shown as code or
// escaped prose (pkg/markdown): it cannot mention anyone, link or close
// an issue, or break out of where it is put.
func Explanation(t task.Task) string {
	var b strings.Builder
	b.WriteString("### Why redfix opened this pull request\n\n")
	fmt.Fprintf(&b, "Task %s, failure group %s, at commit %s.\n\n", markdown.Code(t.ID), markdown.Code(short(t.Fingerprint, 16)), markdown.Code(abbrev(t.Commit)))

	fmt.Fprintf(&b, "**Failing tests** (%d)\n\n", len(t.Failures))
	for _, f := range t.Failures {
		line := "- " + markdown.Code(f.ID())
		if f.Message != "" {
			line += ": " + markdown.Text(f.Message)
		}
		b.WriteString(line + "\n")
		if out := tail(f.Output, maxOutputLines); out != "" {
			b.WriteString("\n" + indent(markdown.CodeBlock("text", out), "  "))
		}
	}
	b.WriteString("\n")

	fl := t.Flakiness
	fmt.Fprintf(&b, "**Re-runs:** %d of %d failed at the failing commit: %s.\n", fl.Failures, fl.Runs, markdown.Text(orNone(fl.Verdict)))
	for _, tf := range t.FlakinessByTest {
		fmt.Fprintf(&b, "- %s: %d of %d failed (%s)\n", markdown.Code(tf.Test), tf.Failures, tf.Runs, markdown.Text(tf.Verdict))
	}
	b.WriteString("\n")

	bis := t.Bisection
	switch {
	case bis.Blame != "":
		fmt.Fprintf(&b, "**Culprit:** %s", markdown.Code(abbrev(bis.Blame)))
		if bis.Subject != "" {
			b.WriteString(" " + markdown.Text(bis.Subject))
		}
		if bis.Author != "" {
			b.WriteString(", by " + markdown.Text(bis.Author))
		}
		fmt.Fprintf(&b, " (confidence %.0f%%, %d test runs, finding %s)\n\n", bis.Confidence*100, bis.Steps, markdown.Text(orNone(bis.Finding)))
		if e := bis.EvidenceText(); e != "" {
			fmt.Fprintf(&b, "Against chance: %s.\n\n", e)
		}
	default:
		fmt.Fprintf(&b, "**Culprit:** none named (finding %s)\n\n", markdown.Text(orNone(bis.Finding)))
	}

	if len(t.Rules) > 0 {
		b.WriteString("**Rules checked before the repair**\n\n| rule | verdict | detail |\n| --- | --- | --- |\n")
		for _, r := range t.Rules {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", markdown.Cell(r.Rule), markdown.Cell(r.Verdict), markdown.Cell(r.Detail))
		}
		b.WriteString("\n")
	}

	gates := lastGates(t)
	if len(gates) == 0 {
		b.WriteString("**Gates:** no verdict is kept with the task.\n")
		return b.String()
	}
	b.WriteString("**Gates** (the last round)\n\n| gate | verdict | detail |\n| --- | --- | --- |\n")
	for _, g := range gates {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", markdown.Cell(g.Name), markdown.Cell(g.Verdict), markdown.Cell(short(g.Detail, 300)))
	}
	return b.String()
}

// lastGates are the verdicts of the task's last round that ran gates.
func lastGates(t task.Task) []task.Gate {
	for i := len(t.Rounds) - 1; i >= 0; i-- {
		if len(t.Rounds[i].Gates) > 0 {
			return t.Rounds[i].Gates
		}
	}
	return nil
}

// abbrev is a commit's first 12 hex digits.
func abbrev(sha string) string { return sha[:min(len(sha), 12)] }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// short is s cut to n bytes (on a rune boundary), with an ellipsis when
// cut.
func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !startsRune(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func startsRune(c byte) bool { return c&0xC0 != 0x80 }

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("… (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pre + l
		}
	}
	return strings.Join(lines, "\n") + "\n\n"
}
