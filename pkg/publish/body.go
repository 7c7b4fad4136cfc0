package publish

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/task"
)

// Limits on what the body shows; the attachments have everything.
const (
	maxFailures     = 10
	maxExcerptLines = 20
	maxDiffLines    = 400
	maxDiffBytes    = 40 << 10 // GitHub refuses bodies over 65536 characters
	maxDetail       = 600      // characters of a gate's detail in the table
	maxMessage      = 300      // characters of a failure's message
)

// FingerprintMarker starts the hidden line of the body that names the
// failure group, so that a pull request can be matched with its group.
// Marker writes the line; the body holds it once, at its end: outside text
// that spells it is broken by unmark.
const FingerprintMarker = "<!-- " + markerName + "="

const markerName = "redfix:fingerprint"

// Marker is the hidden last line of a body for the group fingerprint: the
// fingerprint keeps only letters, digits, "_" and ".", so that it cannot end
// the comment.
func Marker(fingerprint string) string {
	fp := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.", r) {
			return r
		}
		return -1
	}, fingerprint)
	return FingerprintMarker + fp + " -->"
}

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

// UnreviewedNotice heads the body of a pull request whose patch no model
// reviewed.
const UnreviewedNotice = "> [!WARNING]\n> **Not reviewed by a model.** No judge passed this change (the offline policy wrote it, or no model was configured): the gates below are all that checked it. It opens as a draft; review it with more care than a judged one."

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
	main, foot := bodyWith(pr, l, maxDiffBytes, MaxBodyChars)
	if l.Trajectory == "" || utf8.RuneCountInString(main+foot) <= MaxBodyChars {
		return main + foot
	}
	// The diff takes what the rest leaves.
	for _, diffBytes := range []int{maxDiffBytes / 2, maxDiffBytes / 8, 0} {
		main, foot = bodyWith(pr, l, diffBytes, MaxBodyChars)
		if utf8.RuneCountInString(main+foot) <= MaxBodyChars {
			return main + foot
		}
	}
	// Still over: the failures' output is what is left; cut at a line and
	// say so. The footer, with the marker, stays.
	note := "\n\n_This body was cut at GitHub's limit of 65,536 characters; the whole of it is `pull_request.md` in " + l.Attachments + "._\n\n"
	r := []rune(main)
	keep := string(r[:MaxBodyChars-utf8.RuneCountInString(note+foot)-8])
	if i := strings.LastIndexByte(keep, '\n'); i > 0 {
		keep = keep[:i]
	}
	return closeFences(keep) + note + foot
}

// closeFences closes a code block left open by a cut. A fence opens a
// block on a line of its own: three or more backticks and an info string
// without backticks; the block closes at a line of backticks alone, at
// least as many.
func closeFences(s string) string {
	open := ""
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "```") {
			continue
		}
		rest := strings.TrimLeft(t, "`")
		fence := t[:len(t)-len(rest)]
		switch {
		case open == "" && !strings.Contains(rest, "`"):
			open = fence
		case open != "" && rest == "" && len(fence) >= len(open):
			open = ""
		}
	}
	if open != "" {
		return s + "\n" + open
	}
	return s
}

// bodyWith is the body's main part and its footer (which ends with the
// marker).
func bodyWith(pr PullRequest, l Links, diffBytes, limit int) (string, string) {
	var b strings.Builder
	t := pr.Task
	at := code(task.Short(t.Commit))
	if t.Branch != "" {
		at += " on " + code(t.Branch)
	}
	if !task.Reviewed(pr.Gates) {
		b.WriteString(UnreviewedNotice + "\n\n")
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
		// Plain text: what the model wrote cannot format, link or mention.
		b.WriteString(markdown.Quote(unmark(s)) + "\n")
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
		"Comment to say what is wrong. Task %s, failure group %s.</sub>\n\n", code(t.ID), code(t.Fingerprint))
	foot.WriteString(Marker(t.Fingerprint) + "\n")

	if l.Trajectory == "" {
		fmt.Fprintf(&b, "The agent's trajectory is attached as `trajectory.jsonl`: %s by the %s policy, one JSON object per line, each action with its arguments and the observation it got back. It shows how the agent reached this change; `patch.diff` and `gates.json` hold the whole patch and the gates' verdicts.\n\n",
			plural(steps, "step", "steps"), code(policy))
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
		return b.String(), foot.String()
	}
	fmt.Fprintf(&b, "The agent's whole trajectory is [`trajectory.jsonl`](%s): %s by the %s policy, one JSON object per line, each action with its arguments and the observation it got back. `patch.diff`, `gates.json` and this description in full are beside it in %s.\n\n",
		markdown.Dest(l.Trajectory), plural(steps, "step", "steps"), code(policy), l.Attachments)
	room := limit - utf8.RuneCountInString(b.String()) - utf8.RuneCountInString(foot.String())
	b.WriteString(TrajectorySummary(pr.Trajectory, room))
	return b.String(), foot.String()
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
			fmt.Fprintf(b, "### [%s](%s)\n\n", code(f.ID()), markdown.Dest(url))
		} else {
			fmt.Fprintf(b, "### %s\n\n", code(f.ID()))
		}
		if f.Message != "" {
			b.WriteString(codeSpan(f.Message, maxMessage) + "\n\n")
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
		return code(task.Short(sha))
	}
	return "[" + code(task.Short(sha)) + "](" + markdown.Dest(l.Commit(sha)) + ")"
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
	runs := bisectionRuns(bis)
	switch {
	case bis.Good != "" && bis.Bad != "":
		fmt.Fprintf(b, "Found by bisecting %s (%s): the tests pass at %s and fail from %s on.\n\n",
			code(task.Short(bis.Good)+".."+task.Short(bis.Bad)), runs, commitRef(l, bis.Good), commitRef(l, bis.Blame))
	case bis.Steps > 0 || bis.CachedRuns > 0:
		fmt.Fprintf(b, "Found by bisecting (%s).\n\n", runs)
	default:
		b.WriteString("How it was found was not recorded.\n\n")
	}
	if e := bis.EvidenceText(); e != "" {
		fmt.Fprintf(b, "Against chance: %s.\n\n", e)
	}
}

// bisectionRuns says what the bisection's evidence rests on: the test runs
// it made (Steps counts runs, not commits) and those it reused from earlier
// searches, so that evidence from reused runs never stands beside "0 tested".
func bisectionRuns(bis task.Bisection) string {
	switch {
	case bis.CachedRuns > 0 && bis.Steps > 0:
		return fmt.Sprintf("%s, and %s reused from earlier searches", plural(bis.Steps, "test run", "test runs"), plural(bis.CachedRuns, "run", "runs"))
	case bis.CachedRuns > 0:
		return fmt.Sprintf("no new test run: %s reused from earlier searches", plural(bis.CachedRuns, "run", "runs"))
	case bis.Steps > 0:
		return plural(bis.Steps, "test run", "test runs")
	}
	return "its runs were not recorded"
}

func writeFlakiness(b *strings.Builder, t task.Task) {
	if t.TestSettings != "" {
		fmt.Fprintf(b, "Every run of the tests had the repository's test settings: %s.\n\n", code(t.TestSettings))
	}
	fl := t.Flakiness
	if fl.Runs == 0 {
		b.WriteString("_Not measured: the failure was not re-run._\n\n")
		return
	}
	fmt.Fprintf(b, "The failure reproduced in %d/%d runs at %s", fl.Failures, fl.Runs, code(task.Short(t.Commit)))
	if fl.Verdict != "" {
		fmt.Fprintf(b, " (verdict: %s)", inline(fl.Verdict))
	}
	b.WriteString(".\n\n")
	if len(t.FlakinessByTest) > 1 {
		for _, e := range t.FlakinessByTest {
			fmt.Fprintf(b, "- %s: failed %d of %d runs (%s)\n", code(e.Test), e.Failures, e.Runs, inline(e.Verdict))
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

// Outside text goes into the body through these, never as it is: as code
// (verbatim, fenced with more backticks than it holds) or as escaped prose
// (package markdown), and with the fingerprint marker's name broken
// (unmark).

// code is outside text as inline code, whole.
func code(s string) string { return markdown.Code(unmark(s)) }

// codeSpan is one line of outside text as inline code, at most n
// characters.
func codeSpan(s string, n int) string {
	s = strings.TrimSpace(strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s))
	return code(cut(s, n))
}

// inline is one line of outside text as prose: it cannot open a block,
// format, link, mention people or run HTML.
func inline(s string) string { return markdown.Text(unmark(s)) }

// cell is outside text as a table cell, at most maxDetail characters.
func cell(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > maxDetail {
		s = cut(s, maxDetail)
	}
	return markdown.Cell(unmark(s))
}

// codeBlock is outside text as a fenced code block.
func codeBlock(lang, s string) string { return markdown.CodeBlock(lang, unmark(s)) }

// unmark breaks the fingerprint marker's name in outside text with an
// invisible word joiner, so that the marker redfix writes last is the only
// one in the body, code included.
func unmark(s string) string {
	return strings.ReplaceAll(s, markerName, "redfix:"+markdown.Joiner+"fingerprint")
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
