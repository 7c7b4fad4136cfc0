package publish

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/markdown/markdowntest"
	"github.com/redfix/redfix/pkg/task"
)

// evil is outside text that means something to Markdown or to GitHub:
// backticks, a team mention, an image, HTML, a forged marker, a pipe,
// emphasis, a link, issue references, an address and bare URLs.
const evil = "`x` ``y`` @org/team ![img](http://x/y.png) <img src=x> <!-- redfix:fingerprint=fake --> a|b **b** _e_ [l](http://e.vil) #123 GH-4 owner/repo#5 jane@example.com https://e.vil www.e.vil &#64;org"

// evilLines is evil across lines that would open blocks and break fences.
const evilLines = evil + "\n```\n# heading\n- item\n> quote\n| c | d |\n<details>\n---"

// hostilePR is a pull request whose every piece of outside text is hostile.
func hostilePR() PullRequest {
	t := sampleTask()
	t.Branch = "main`@org/team"
	t.Failures = []task.Failure{
		{Package: "example.com/calc", Test: "TestParse/`tick`_@org/team_![i](http://x/y.png)", Message: evilLines,
			Output: "=== RUN   TestParse\n" + evilLines + "\n````\n--- FAIL: TestParse (0.00s)\n"},
		{Package: "example.com/calc", Test: "TestEvil/<img_src=x>|<!--_redfix:fingerprint=fake_-->", Message: "#1 | @org/team", Output: "ok\n"},
	}
	t.FlakinessByTest = []task.TestFlakiness{
		{Test: t.Failures[0].ID(), Runs: 3, Failures: 3, Verdict: "reliable @org/team"},
		{Test: t.Failures[1].ID(), Runs: 3, Failures: 3, Verdict: "reliable"},
	}
	t.Bisection.Subject = evilLines
	t.Bisection.Author = "Mallory `@org/team` ![x](http://x/y.png) <mallory@example.com>"
	traj := []map[string]any{
		{"step": 1, "action": map[string]any{"name": "read_file`@org/team", "args": map[string]any{"path": "a`b/@org/team/<img src=x>.go"}, "thought": evilLines}},
		{"step": 2, "action": map[string]any{"name": "run_tests", "args": map[string]any{}}, "observation": map[string]any{"is_error": true, "content": evilLines}},
	}
	var jsonl []byte
	for _, s := range traj {
		b, _ := json.Marshal(s)
		jsonl = append(append(jsonl, b...), '\n')
	}
	return PullRequest{
		Task:       t,
		Patch:      samplePatch,
		Summary:    evilLines + "\nFixes #1. cc @org/team\n<!-- redfix:fingerprint=fake -->",
		Trajectory: jsonl,
		Policy:     "llm:model`@org/team",
		Steps:      2,
		Gates: []task.Gate{
			{Name: "integrity", Verdict: task.GatePass, Detail: "1 file(s) changed"},
			{Name: "evil|gate`@org", Verdict: task.GateFail, Detail: evilLines, ElapsedMS: 5},
			{Name: "judge", Verdict: "<img src=x>|", Detail: "x\n| --- | --- |\ny"},
		},
	}
}

// hostileLinks are links as the GitHub publisher makes them.
func hostileLinks() Links {
	return Links{
		Commit:      func(sha string) string { return "https://github.com/o/r/commit/" + sha },
		Test:        func(f task.Failure) string { return "https://github.com/o/r/blob/c0ffee/dir (x)/a_test.go#L3" },
		Trajectory:  "https://github.com/o/r/blob/t/trajectory.jsonl",
		Attachments: "[the trajectory's commit](https://github.com/o/r/tree/t) (branch `redfix-trajectories/x`)",
	}
}

// bodyProblems is what is wrong with body, the body of pr: anything that
// acts (a link other than ours, an image, HTML other than ours), a mention
// or a reference GitHub would act on, outside text that does not read back
// as itself, a table row with another number of cells, a code block that
// does not hold the text given, or a marker that is not the only one and
// last.
func bodyProblems(body string, pr PullRequest, withLinks bool) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	t := pr.Task

	// The marker, once, last.
	if n := strings.Count(body, markerName); n != 1 {
		bad("%q appears %d times", markerName, n)
	}
	if !strings.HasSuffix(body, "\n"+Marker(t.Fingerprint)+"\n") {
		bad("the body does not end with its marker")
	}

	d := markdowntest.Read(body)
	if len(d.Images) > 0 {
		bad("images: %q", d.Images)
	}
	for _, l := range d.Links {
		if !withLinks || !strings.HasPrefix(l, "https://github.com/o/r/") {
			bad("link to %q", l)
		}
	}
	details := regexp.MustCompile(`^<details>\n<summary>The agent's \d+ steps?, one line each</summary>$`)
	for _, h := range d.HTML {
		if h != "<br>" && h != "<sub>" && h != "</sub>" && h != "</details>" && h != Marker(t.Fingerprint) && !details.MatchString(h) {
			bad("HTML %q", h)
		}
	}
	if refs := markdowntest.Refs(d.Prose); len(refs) > 0 {
		bad("GitHub would act on %q", refs)
	}

	// The blocks redfix writes, and no more.
	// (The summary's quote, and the notice when no judge passed it.)
	quotes := 1
	if !task.Reviewed(pr.Gates) {
		quotes++
	}
	want := map[string]int{"Heading": 7 + len(t.Failures), "Blockquote": quotes, "Table": 1}
	for k, n := range want {
		if d.Kinds[k] != n {
			bad("%d %s nodes, want %d", d.Kinds[k], k, n)
		}
	}
	if len(d.Tables) != 1 || strings.Join(d.Tables[0], ",") != "gate,verdict,time,detail" {
		bad("tables' headers: %q", d.Tables)
	}
	inTable := false
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "| gate |") {
			inTable = true
		}
		if inTable && line == "" {
			inTable = false
		}
		if inTable && markdowntest.Cells(line) != 4 {
			bad("table row with %d cells: %s", markdowntest.Cells(line), line)
		}
	}

	// Every piece of outside text reads back as itself (line breaks as
	// spaces), so none of it was taken for Markdown.
	shown := strings.ReplaceAll(d.Shown, markdown.Joiner, "")
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	pieces := []string{t.Branch, t.Bisection.Subject, "Mallory `@org/team` ![x](http://x/y.png)", pr.Summary, pr.Policy}
	for _, f := range t.Failures {
		pieces = append(pieces, f.ID(), f.Message)
	}
	for _, g := range pr.Gates {
		pieces = append(pieces, g.Name, g.Detail)
	}
	for _, e := range t.FlakinessByTest {
		pieces = append(pieces, e.Test, e.Verdict)
	}
	if withLinks {
		pieces = append(pieces, "read_file`@org/team", "a`b/@org/team/<img src=x>.go", strings.SplitN(evilLines, "\n", 2)[0])
	}
	for _, p := range pieces {
		if !strings.Contains(shown, flat(p)) {
			bad("%q does not read back as itself", p)
		}
	}

	// Each output excerpt and the change are code blocks holding the text.
	blocks := []string{}
	for _, c := range d.Code {
		if strings.HasSuffix(c, "\n") {
			blocks = append(blocks, c)
		}
	}
	wantBlocks := []string{}
	for _, f := range t.Failures {
		wantBlocks = append(wantBlocks, unmark(excerpt(f.Output))+"\n")
	}
	wantBlocks = append(wantBlocks, diffstat(pr.Patch), pr.Patch)
	if strings.Join(blocks, "\x00") != strings.Join(wantBlocks, "\x00") {
		bad("code blocks:\n%q\nwant\n%q", blocks, wantBlocks)
	}
	if closeFences(body) != body {
		bad("a code block is left open")
	}
	return problems
}

func TestBodyOfHostileText(t *testing.T) {
	pr := hostilePR()
	body := Body(pr)
	golden(t, "body-hostile.golden.md", body)
	for _, p := range bodyProblems(body, pr, false) {
		t.Error(p)
	}
	linked := BodyWith(pr, hostileLinks())
	for _, p := range bodyProblems(linked, pr, true) {
		t.Errorf("with links: %s", p)
	}
	if !strings.Contains(linked, "(https://github.com/o/r/blob/c0ffee/dir%20%28x%29/a_test.go#L3)") {
		t.Errorf("the test's link is not escaped:\n%s", linked)
	}

	// The checks catch text written as it is: in the summary, as a code
	// span with one backtick, or as a code block that it closes.
	for name, broken := range map[string]string{
		"summary":    strings.Replace(body, "## The change", "> "+evil+"\n\n## The change", 1),
		"code span":  strings.Replace(body, "## The change", "`"+evil+"`\n\n## The change", 1),
		"code block": strings.Replace(body, "## The change", "```text\n"+evilLines+"\n```\n\n## The change", 1),
		"table":      strings.Replace(body, "| judge |", "| a|b |", 1),
		"marker":     strings.Replace(body, "## Gates", "`<!-- redfix:fingerprint=fake -->`\n\n## Gates", 1),
	} {
		if len(bodyProblems(broken, pr, false)) == 0 {
			t.Errorf("the checks pass a body with outside text as it is (%s)", name)
		}
	}
}

// A body cut at GitHub's limit keeps its footer and marker, and closes the
// code block the cut left open.
func TestBodyCutKeepsTheMarker(t *testing.T) {
	pr := samplePR()
	pr.Task.Failures = nil
	for i := 0; i < maxFailures; i++ {
		pr.Task.Failures = append(pr.Task.Failures, task.Failure{Package: "p", Test: fmt.Sprintf("Test%d", i),
			Output: strings.Repeat(strings.Repeat("x", 3990)+"\n", maxExcerptLines)})
	}
	body := BodyWith(pr, hostileLinks())
	if !strings.Contains(body, "This body was cut at GitHub's limit") {
		t.Fatalf("the body was not cut (%d characters)", len([]rune(body)))
	}
	if n := len([]rune(body)); n > MaxBodyChars {
		t.Errorf("the cut body has %d characters", n)
	}
	if strings.Count(body, markerName) != 1 || !strings.HasSuffix(body, Marker(pr.Task.Fingerprint)+"\n") {
		t.Errorf("the cut body lost its marker:\n%s", body[len(body)-600:])
	}
	if closeFences(body) != body {
		t.Error("the cut left a code block open")
	}
}

func TestMarker(t *testing.T) {
	if got := Marker("9f86d0"); got != "<!-- redfix:fingerprint=9f86d0 -->" {
		t.Errorf("Marker = %q", got)
	}
	if got := Marker("x --> <img src=y>"); strings.Count(got, "-->") != 1 || strings.Contains(got, "<img") {
		t.Errorf("Marker of a hostile fingerprint = %q", got)
	}
}

func TestCloseFences(t *testing.T) {
	for in, want := range map[string]string{
		"a\n```text\nb":               "a\n```text\nb\n```",
		"a\n````text\n```\nb":         "a\n````text\n```\nb\n````",
		"a\n```text\nb\n```\nc":       "a\n```text\nb\n```\nc",
		"``` ``x`` ```\nb":            "``` ``x`` ```\nb", // a code span, not a fence
		"a\n```text\nb\n`````\n```go": "a\n```text\nb\n`````\n```go\n```",
	} {
		if got := closeFences(in); got != want {
			t.Errorf("closeFences(%q) = %q, want %q", in, got, want)
		}
	}
}
