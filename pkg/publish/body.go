package publish

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/redfix/redfix/pkg/task"
)

// Limits on what the body shows; the attachments have everything.
const (
	maxFailures     = 10
	maxExcerptLines = 20
	maxDiffLines    = 400
	maxDiffBytes    = 40 << 10 // GitHub refuses bodies over 65536 characters
	maxDetail       = 600      // characters of a gate's detail in the table
)

// FingerprintMarker starts the hidden line of the body that names the
// failure group, so that a pull request can be matched with its group.
const FingerprintMarker = "<!-- redfix:fingerprint="

// Links make the body's references clickable where the pull request lives
// (GitHub); the zero Links write plain text, as the local publisher does.
type Links struct {
	// Commit is the page of a commit.
	Commit func(sha string) string
	// Test is the page of a failing test's source, "" when unknown.
	Test func(f task.Failure) string
	// Trajectory is where the whole trajectory.jsonl can be opened; when
	// set, the body also carries a collapsed summary of the steps.
	Trajectory string
	// Attachments is where patch.diff and gates.json can be opened.
	Attachments string
}

// MaxBodyChars is GitHub's limit on a pull request's body.
const MaxBodyChars = 65536

// Body is the pull request's Markdown: what failed, which commit broke it
// and how that was found, whether it is flaky, what the agent says and
// changed, the gates' verdicts, the trajectory, and how to give feedback.
func Body(pr PullRequest) string { return BodyWith(pr, Links{}) }

// BodyWith is Body with links. With a trajectory link the body fits in
// MaxBodyChars: the trajectory's summary is shortened first, then the diff,
// and the body says what was shortened and where the whole is.
func BodyWith(pr PullRequest, l Links) string {
	body := bodyWith(pr, l, maxDiffBytes, MaxBodyChars)
	if l.Trajectory == "" || utf8.RuneCountInString(body) <= MaxBodyChars {
		return body
	}
	// The diff takes what the rest leaves.
	for _, diffBytes := range []int{maxDiffBytes / 2, maxDiffBytes / 8, 0} {
		body = bodyWith(pr, l, diffBytes, MaxBodyChars)
		if utf8.RuneCountInString(body) <= MaxBodyChars {
			return body
		}
	}
	// Still over: the failures' output is what is left; cut at a line and
	// say so.
	note := "\n\n_This body was cut at GitHub's limit of 65,536 characters; the whole of it is `pull_request.md` in " + l.Attachments + "._\n"
	r := []rune(body)
	keep := string(r[:MaxBodyChars-utf8.RuneCountInString(note)-8])
	if i := strings.LastIndexByte(keep, '\n'); i > 0 {
		keep = keep[:i]
	}
	return closeFences(keep) + note
}

// closeFences closes a code block left open by a cut.
func closeFences(s string) string {
	open := ""
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			fence := t[:len(t)-len(strings.TrimLeft(t, "`"))]
			switch {
			case open == "":
				open = fence
			case fence == open && strings.TrimLeft(t, "`") == "":
				open = ""
			}
		}
	}
	if open != "" {
		return s + "\n" + open
	}
	return s
}

func bodyWith(pr PullRequest, l Links, diffBytes, limit int) string {
	var b strings.Builder
	t := pr.Task
	at := "`" + task.Short(t.Commit) + "`"
	if t.Branch != "" {
		at += " on `" + t.Branch + "`"
	}
	fmt.Fprintf(&b, "redfix found %s failing at %s and proposes the change below. Every gate it ran is listed with its verdict; the agent's whole trajectory is attached.\n\n",
		plural(len(t.Failures), "test", "tests"), at)

	b.WriteString("## What failed\n\n")
	writeFailures(&b, t.Failures, l)

	b.WriteString("## The commit that broke it\n\n")
	writeBisection(&b, t.Bisection, pr.BlameSubject, l)

	b.WriteString("## Is it flaky?\n\n")
	writeFlakiness(&b, t)

	b.WriteString("## What the agent says\n\n")
	if s := strings.TrimSpace(pr.Summary); s != "" {
		for _, l := range strings.Split(s, "\n") {
			b.WriteString(strings.TrimRight("> "+l, " ") + "\n")
		}
		b.WriteString("\n")
	} else {
		b.WriteString("_The agent left no summary._\n\n")
	}

	b.WriteString("## The change\n\n")
	writeChange(&b, pr.Patch, diffBytes, l)

	b.WriteString("## Gates\n\n")
	writeGates(&b, pr.Gates)

	b.WriteString("## Trajectory\n\n")
	steps := pr.Steps
	if steps == 0 {
		steps = bytes.Count(bytes.TrimSpace(pr.Trajectory), []byte("\n"))
		if len(bytes.TrimSpace(pr.Trajectory)) > 0 {
			steps++
		}
	}
	policy := pr.Policy
	if policy == "" {
		policy = "unknown"
	}
	var foot strings.Builder
	foot.WriteString("---\n\n")
	fmt.Fprintf(&foot, "<sub>Written by redfix, a bot that turns red CI into pull requests; a person should review it like any other change. "+
		"Merge it if it is right. **Close it to reject it**: redfix records a closed pull request as rejected and will not open another one for this failure. "+
		"Comment to say what is wrong. Task `%s`, failure group `%s`.</sub>\n\n", t.ID, t.Fingerprint)
	foot.WriteString(FingerprintMarker + t.Fingerprint + " -->\n")

	if l.Trajectory == "" {
		fmt.Fprintf(&b, "The agent's trajectory is attached as `trajectory.jsonl`: %s by the `%s` policy, one JSON object per line, each action with its arguments and the observation it got back. It shows how the agent reached this change; `patch.diff` and `gates.json` hold the whole patch and the gates' verdicts.\n\n",
			plural(steps, "step", "steps"), policy)
		if pr.Candidates > 1 {
			fmt.Fprintf(&b, "This is candidate %d of %d independent attempts; the gates checked every one, and this one ranked first (the judge's verdict, then agreement between candidates, then the smaller change).\n\n", pr.Chosen, pr.Candidates)
		}
		if pr.Rounds > 0 {
			fmt.Fprintf(&b, "The gates rejected an earlier version: the agent got their evidence back and revised it (%s; each is in the trajectory, on a step by the `gates`).\n\n", plural(pr.Rounds, "feedback round", "feedback rounds"))
		}
		if sp := pr.Spend; sp.Calls > 0 {
			fmt.Fprintf(&b, "Model use: %s, %d input tokens (%d from the cache), %d output tokens, $%.4f.\n\n",
				plural(sp.Calls, "call", "calls"), sp.PromptTokens, sp.CachedTokens, sp.CompletionTokens, sp.CostUSD)
		}
		return b.String() + foot.String()
	}
	fmt.Fprintf(&b, "The agent's whole trajectory is [`trajectory.jsonl`](%s): %s by the `%s` policy, one JSON object per line, each action with its arguments and the observation it got back. `patch.diff`, `gates.json` and this description in full are beside it in %s.\n\n",
		l.Trajectory, plural(steps, "step", "steps"), policy, l.Attachments)
	room := limit - utf8.RuneCountInString(b.String()) - utf8.RuneCountInString(foot.String())
	b.WriteString(TrajectorySummary(pr.Trajectory, room))
	return b.String() + foot.String()
}

func writeFailures(b *strings.Builder, fs []task.Failure, l Links) {
	if len(fs) == 0 {
		b.WriteString("_The task names no failing test._\n\n")
		return
	}
	for i, f := range fs {
		if i == maxFailures {
			fmt.Fprintf(b, "… and %d more failing tests (see the task).\n\n", len(fs)-maxFailures)
			break
		}
		if url := testLink(l, f); url != "" {
			fmt.Fprintf(b, "### [`%s`](%s)\n\n", f.ID(), url)
		} else {
			fmt.Fprintf(b, "### `%s`\n\n", f.ID())
		}
		if f.Message != "" {
			b.WriteString(codeSpan(f.Message) + "\n\n")
		}
		if ex := excerpt(f.Output); ex != "" {
			b.WriteString(codeBlock("text", ex))
		}
	}
}

func testLink(l Links, f task.Failure) string {
	if l.Test == nil {
		return ""
	}
	return l.Test(f)
}

// commitRef is a commit as the body shows it: its short hash, linked when
// links are on.
func commitRef(l Links, sha string) string {
	if l.Commit == nil || sha == "" {
		return "`" + task.Short(sha) + "`"
	}
	return "[`" + task.Short(sha) + "`](" + l.Commit(sha) + ")"
}

func writeBisection(b *strings.Builder, bis task.Bisection, subject string, l Links) {
	if bis.Blame == "" {
		b.WriteString("_No commit was blamed: the failure was not bisected._\n\n")
		return
	}
	if subject == "" {
		subject = bis.Subject
	}
	b.WriteString(commitRef(l, bis.Blame))
	if subject != "" {
		fmt.Fprintf(b, " %s", inline(subject))
	}
	if name, _, _ := strings.Cut(bis.Author, " <"); name != "" {
		fmt.Fprintf(b, " by %s", inline(name)) // no address: bodies get scraped
	}
	b.WriteString("\n\n")
	switch {
	case bis.Good != "" && bis.Bad != "":
		fmt.Fprintf(b, "Found by bisecting `%s..%s` (%s tested): the tests pass at %s and fail from %s on.\n\n",
			task.Short(bis.Good), task.Short(bis.Bad), plural(bis.Steps, "commit", "commits"), commitRef(l, bis.Good), commitRef(l, bis.Blame))
	case bis.Steps > 0:
		fmt.Fprintf(b, "Found by bisecting (%s tested).\n\n", plural(bis.Steps, "commit", "commits"))
	default:
		b.WriteString("How it was found was not recorded.\n\n")
	}
}

func writeFlakiness(b *strings.Builder, t task.Task) {
	fl := t.Flakiness
	if fl.Runs == 0 {
		b.WriteString("_Not measured: the failure was not re-run._\n\n")
		return
	}
	fmt.Fprintf(b, "The failure reproduced in %d/%d runs at `%s`", fl.Failures, fl.Runs, task.Short(t.Commit))
	if fl.Verdict != "" {
		fmt.Fprintf(b, " (verdict: %s)", fl.Verdict)
	}
	b.WriteString(".\n\n")
	if len(t.FlakinessByTest) > 1 {
		for _, e := range t.FlakinessByTest {
			fmt.Fprintf(b, "- `%s`: failed %d of %d runs (%s)\n", e.Test, e.Failures, e.Runs, e.Verdict)
		}
		b.WriteString("\n")
	}
}

func writeChange(b *strings.Builder, patch string, maxBytes int, l Links) {
	if strings.TrimSpace(patch) == "" {
		b.WriteString("_The patch is empty._\n\n")
		return
	}
	b.WriteString(codeBlock("text", diffstat(patch)))
	lines := strings.Split(strings.TrimRight(patch, "\n"), "\n")
	shown, size := lines, 0
	for i, l := range lines {
		size += len(l) + 1
		if i == maxDiffLines || size > maxBytes {
			shown = lines[:i]
			break
		}
	}
	if len(shown) > 0 {
		b.WriteString(codeBlock("diff", strings.Join(shown, "\n")))
	}
	where := "`patch.diff`"
	if l.Attachments != "" {
		where = "`patch.diff` in " + l.Attachments + " (and the Files tab)"
	}
	if len(shown) < len(lines) {
		fmt.Fprintf(b, "_The diff is cut after %d of its %d lines; %s has all of it._\n\n", len(shown), len(lines), where)
	}
}

func writeGates(b *strings.Builder, gates []task.Gate) {
	if len(gates) == 0 {
		b.WriteString("_No gate ran._\n\n")
		return
	}
	b.WriteString("| gate | verdict | time | detail |\n| --- | --- | --- | --- |\n")
	for _, g := range gates {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", cell(g.Name), verdict(g.Verdict), elapsed(g.ElapsedMS), cell(g.Detail))
	}
	b.WriteString("\n")
}

func verdict(v string) string {
	switch v {
	case task.GatePass:
		return "✅ pass"
	case task.GateFail:
		return "❌ fail"
	case task.GateNotRun:
		return "⚪ not run"
	}
	return cell(v)
}

func elapsed(ms int64) string {
	switch {
	case ms <= 0:
		return ""
	case ms < 1000:
		return fmt.Sprintf("%d ms", ms)
	}
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > maxDetail {
		s = cut(s, maxDetail)
	}
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "<", "&lt;")
	return strings.ReplaceAll(s, "\n", "<br>")
}

// inline makes one line of outside text safe as Markdown prose: it cannot
// open a block, mention people or run HTML.
func inline(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	r := strings.NewReplacer("<", "&lt;", "@", "@\u200b", "`", "'", "*", `\*`, "_", `\_`, "[", `\[`)
	return r.Replace(s)
}

// codeSpan shows one line of outside text verbatim, as code.
func codeSpan(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	return "`" + cut(strings.ReplaceAll(s, "`", "'"), 300) + "`"
}

// excerpt is the part of a test's output that tells what went wrong: the
// runner's own bookkeeping lines dropped, the first lines kept.
func excerpt(out string) string {
	var keep []string
	more := 0
	for _, l := range strings.Split(out, "\n") {
		tl := strings.TrimSpace(l)
		if tl == "" || strings.HasPrefix(tl, "=== ") || tl == "FAIL" || tl == "PASS" {
			continue
		}
		if len(keep) == maxExcerptLines {
			more++
			continue
		}
		keep = append(keep, strings.TrimRight(l, " \t\r"))
	}
	if more > 0 {
		keep = append(keep, fmt.Sprintf("… (%d more lines)", more))
	}
	return strings.Join(keep, "\n")
}

// codeBlock fences s with more backticks than it holds in a row.
func codeBlock(lang, s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n\n"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// diffstat summarises a unified diff as git diff --stat does.
func diffstat(patch string) string {
	type stat struct {
		name     string
		add, del int
		binary   bool
	}
	var (
		files          []*stat
		cur            *stat
		oldLeft, newLf int
	)
	sc := bufio.NewScanner(strings.NewReader(patch))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		l := sc.Text()
		if cur != nil && (oldLeft > 0 || newLf > 0) {
			switch {
			case strings.HasPrefix(l, "+"):
				cur.add++
				newLf--
			case strings.HasPrefix(l, "-"):
				cur.del++
				oldLeft--
			case strings.HasPrefix(l, `\`):
			default:
				oldLeft--
				newLf--
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			name := strings.TrimPrefix(l, "diff --git ")
			if i := strings.Index(name, " b/"); i >= 0 {
				name = name[i+3:]
			}
			cur = &stat{name: name}
			files = append(files, cur)
		case cur != nil && strings.HasPrefix(l, "+++ ") && l != "+++ /dev/null":
			cur.name = strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
		case cur != nil && strings.HasPrefix(l, "rename to "):
			cur.name = strings.TrimPrefix(l, "rename to ")
		case cur != nil && (strings.HasPrefix(l, "Binary files ") || strings.HasPrefix(l, "GIT binary patch")):
			cur.binary = true
		case cur != nil && strings.HasPrefix(l, "@@ "):
			oldLeft, newLf = hunkLen(l)
		}
	}
	width, most, adds, dels := 0, 0, 0, 0
	for _, f := range files {
		width = max(width, utf8.RuneCountInString(f.name))
		most = max(most, f.add+f.del)
		adds += f.add
		dels += f.del
	}
	const bar = 40
	var b strings.Builder
	for _, f := range files {
		if f.binary {
			fmt.Fprintf(&b, " %-*s | Bin\n", width, f.name)
			continue
		}
		plus, minus := f.add, f.del
		if most > bar {
			plus = (f.add*bar + most - 1) / most
			minus = (f.del*bar + most - 1) / most
		}
		fmt.Fprintf(&b, " %-*s | %d %s%s\n", width, f.name, f.add+f.del, strings.Repeat("+", plus), strings.Repeat("-", minus))
	}
	fmt.Fprintf(&b, " %s changed, %s(+), %s(-)\n", plural(len(files), "file", "files"), plural(adds, "insertion", "insertions"), plural(dels, "deletion", "deletions"))
	return b.String()
}

// hunkLen reads the old and new line counts of "@@ -a,b +c,d @@".
func hunkLen(h string) (int, int) {
	f := strings.Fields(h)
	if len(f) < 3 {
		return 0, 0
	}
	count := func(r string) int {
		_, n, ok := strings.Cut(r[1:], ",")
		if !ok {
			return 1
		}
		v, _ := strconv.Atoi(n)
		return v
	}
	return count(f[1]), count(f[2])
}
