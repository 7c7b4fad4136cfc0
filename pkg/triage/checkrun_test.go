package triage

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/markdown/markdowntest"
	"github.com/redfix/redfix/pkg/task"
)

const (
	culpritSHA = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
	pullURL    = "https://github.com/acme/shop/pull/7"
)

// reliable is a task of a reliable failure bisected to culpritSHA.
func reliable(status task.Status, reason, pr string) task.Task {
	return task.Task{
		ID: "20261129T001500Z-3f9a2b1c4d5e", Fingerprint: "9f86d081884c7d659a2feaa0c55ad015", Commit: strings.Repeat("a", 40),
		Failures:  []task.Failure{{Package: "shop/pricing", Test: "TestVolumeDiscount", Message: "got 90, want 85"}},
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
		Bisection: task.Bisection{Blame: culpritSHA, Subject: "pricing: keep tiers sorted", Author: "Linus P", Steps: 4, Confidence: 0.97, Evidence: 3.56, Finding: "culprit"},
		Status:    status, Reason: reason, PullRequest: pr,
	}
}

func TestCheckText(t *testing.T) {
	t.Parallel()
	flaky := reliable(task.StatusDropped, "flaky: passed 2 of 3 re-runs", "")
	flaky.Flakiness = task.Flakiness{Runs: 3, Failures: 1, Verdict: "flaky"}
	flaky.Bisection = task.Bisection{}
	dup := reliable(task.StatusDropped, "duplicate of task 20261128T090000Z-aaaaaaaaaaaa", "")
	dup.Flakiness, dup.Bisection = task.Flakiness{}, task.Bisection{}
	undecided := reliable(task.StatusQueued, "", "")
	undecided.Bisection = task.Bisection{Finding: "undecided", Steps: 9}
	for _, tc := range []struct {
		name  string
		tasks []task.Task
		fixes map[string]task.Fix
		title string
		says  []string
		not   []string
	}{
		{name: "queued with a culprit", tasks: []task.Task{reliable(task.StatusQueued, "", "")},
			title: "a repair is under way",
			says: []string{"#### `shop/pricing.TestVolumeDiscount`", "`shop/pricing.TestVolumeDiscount`: got 90, want 85",
				"**Re-runs:** reliable: 3 of 3 failed at this commit.",
				"**Culprit:** `c0ffee00c0ff` pricing: keep tiers sorted, by Linus P, found by bisection with confidence 97% in 4 test runs; the test runs were 3.6 times likelier with this culprit than for a test failing half of its runs at every commit.",
				"**Outcome:** a repair is queued.", "This check is neutral"}},
		{name: "fix pull request open", tasks: []task.Task{reliable(task.StatusPublished, "all gates passed", pullURL)},
			title: "fix pull request open", says: []string{"[the fix pull request](" + pullURL + "), open."}},
		{name: "revert pull request merged", tasks: []task.Task{reliable(task.StatusPublished, "reverted the culprit: no patch passed", pullURL)},
			fixes: map[string]task.Fix{pullURL: {URL: pullURL, Kind: task.KindRevert, State: task.FixLanded}},
			title: "revert pull request merged", says: []string{"[the revert pull request](" + pullURL + "), merged."}},
		{name: "fix closed", tasks: []task.Task{reliable(task.StatusPublished, "", pullURL)},
			fixes: map[string]task.Fix{pullURL: {URL: pullURL, State: task.FixClosed}},
			title: "fix pull request closed without merging", says: []string{"), closed without merging."}},
		{name: "no patch", tasks: []task.Task{reliable(task.StatusNoPatch, "the oracle failed: 1 of 3 runs", "")},
			title: "no fix passed the gates", says: []string{"no patch passed the gates: the oracle failed: 1 of 3 runs"}},
		{name: "flaky", tasks: []task.Task{flaky}, title: "flaky: not repaired",
			says: []string{"**Re-runs:** flaky: 1 of 3 failed at this commit.", "not repaired: flaky: passed 2 of 3 re-runs"},
			not:  []string{"**Culprit:**"}},
		{name: "duplicate, before any re-run", tasks: []task.Task{dup}, title: "already in hand in another task",
			says: []string{"not repaired: duplicate of task 20261128T090000Z-aaaaaaaaaaaa"}, not: []string{"**Re-runs:**", "**Culprit:**"}},
		{name: "opted out", tasks: []task.Task{{ID: "x", Status: task.StatusDropped, Reason: "repository opted out"}},
			title: "not repaired: the repository opted out", says: []string{"#### Failing tests", "not repaired: repository opted out"}},
		{name: "over the daily limit", tasks: []task.Task{{ID: "x", Status: task.StatusDropped, Reason: "daily job budget of 3 used up"}},
			title: "not repaired today: the daily limit is reached"},
		{name: "no culprit named", tasks: []task.Task{undecided}, title: "a repair is under way",
			says: []string{"**Culprit:** none named (bisection's finding: undecided)."}},
		{name: "several groups", tasks: []task.Task{flaky, reliable(task.StatusPublished, "", pullURL), flaky},
			title: "3 failure groups: 2 × flaky: not repaired; fix pull request open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, summary := CheckText(tc.tasks, tc.fixes)
			if title != tc.title {
				t.Errorf("title %q, want %q", title, tc.title)
			}
			for _, s := range tc.says {
				if !strings.Contains(summary, s) {
					t.Errorf("the summary lacks %q:\n%s", s, summary)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(summary, s) {
					t.Errorf("the summary says %q:\n%s", s, summary)
				}
			}
			if d := markdowntest.Read(summary); d.Kinds["Heading"] != len(tc.tasks) {
				t.Errorf("%d headings for %d groups:\n%s", d.Kinds["Heading"], len(tc.tasks), summary)
			}
		})
	}
}

// TestCheckTextHostile: what the repository, its tests and CI wrote
// (test names, messages, a commit's subject and author, a reason quoting
// them) reads back as itself in the summary and does nothing: no link but
// the pull request's, no image, no HTML, no mention or reference, no
// heading or list of its own. The title holds none of it.
func TestCheckTextHostile(t *testing.T) {
	t.Parallel()
	hostile := []string{
		"@org/team please look", "Fixes #1, closes owner/repo#5", "[link](http://e.vil)", "![img](http://e.vil/x.png)",
		"<img src=x onerror=alert(1)>", "<!-- redfix:fingerprint=fake -->", "https://e.vil/x", "# heading\n- item",
		"``x`` ``` y", "| a | b |\n| - | - |", "**bold** _em_ ~~s~~", "</details><script>alert(1)</script>",
	}
	tk := reliable(task.StatusPublished, "all gates passed for "+hostile[0]+" "+hostile[3], pullURL)
	tk.Failures = nil
	for i, h := range hostile {
		tk.Failures = append(tk.Failures, task.Failure{Package: "p" + h, Test: "Test" + h, Message: h + " " + hostile[(i+1)%len(hostile)],
			Output: strings.Join(hostile, "\n")})
	}
	tk.Bisection.Subject, tk.Bisection.Author = hostile[1]+" "+hostile[2], hostile[0]+" <mallory@e.vil>"
	dropped := reliable(task.StatusDropped, "a pull request by a person is in flight: "+hostile[4]+" "+hostile[6], "")
	dropped.Flakiness.Verdict = hostile[7]

	title, summary := CheckText([]task.Task{tk, dropped}, nil)
	for _, h := range hostile {
		for _, w := range strings.Fields(h) {
			if strings.Contains(title, w) && len(w) > 2 {
				t.Errorf("the title %q holds outside text %q", title, w)
			}
		}
	}
	d := markdowntest.Read(summary)
	if len(d.Links) != 1 || d.Links[0] != pullURL {
		t.Errorf("links %q, want the pull request's alone", d.Links)
	}
	if len(d.Images)+len(d.HTML) > 0 {
		t.Errorf("images %q, HTML %q", d.Images, d.HTML)
	}
	if refs := markdowntest.Refs(d.Prose); len(refs) > 0 {
		t.Errorf("GitHub would act on %q", refs)
	}
	for kind, n := range map[string]int{"Heading": 2, "List": 2, "Table": 0, "Blockquote": 0, "Emphasis": 6, "Strikethrough": 0} {
		if d.Kinds[kind] != n {
			t.Errorf("%d %s nodes, want %d:\n%s", d.Kinds[kind], kind, n, summary)
		}
	}
	// The details: each output as one code block holding it, and nothing
	// else that acts.
	details := markdowntest.Read(CheckDetails([]task.Task{tk, dropped}))
	if len(details.Links)+len(details.Images)+len(details.HTML) > 0 || len(markdowntest.Refs(details.Prose)) > 0 {
		t.Errorf("the details act: links %q, images %q, HTML %q", details.Links, details.Images, details.HTML)
	}
	if n := details.Kinds["FencedCodeBlock"]; n != maxShownTests {
		t.Errorf("%d code blocks, want one per shown failure (%d)", n, maxShownTests)
	}
	held := 0
	for _, code := range details.Code {
		if strings.TrimRight(code, "\n") == strings.Join(hostile, "\n") {
			held++
		}
	}
	if held != maxShownTests {
		t.Errorf("%d code blocks hold the output as it is, want %d:\n%q", held, maxShownTests, details.Code)
	}

	shown := strings.ReplaceAll(d.Shown, markdown.Joiner, "")
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	pieces := []string{tk.Bisection.Subject, tk.Bisection.Author, dropped.Reason, dropped.Flakiness.Verdict}
	for _, f := range tk.Failures[:maxShownTests] {
		pieces = append(pieces, f.ID(), f.Message)
	}
	for _, p := range pieces {
		if !strings.Contains(shown, flat(p)) {
			t.Errorf("%q does not read back as itself in:\n%s", p, summary)
		}
	}
}

// shown keeps what the intake showed as verdicts.
type shown struct {
	repos []string
	outs  [][]Outcome
}

func (s *shown) Decided(_ context.Context, repo string, outs []Outcome) {
	s.repos, s.outs = append(s.repos, repo), append(s.outs, outs)
}

// The intake shows each triaged report's outcomes on its commit once they
// are decided, and nothing for a report that decided no group.
func TestIntakeShowsVerdicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr := &scriptedTriage{}
	in, _ := newIntake(t, tr)
	v := &shown{}
	in.Verdicts = v
	if err := in.process(ctx, report1("r1"), ingest.Attempt{N: 1}); err != nil {
		t.Fatal(err)
	}
	if len(v.outs) != 1 || v.repos[0] != "/srv/repo" || len(v.outs[0]) != 1 || v.outs[0][0].TaskID != "t-r1" {
		t.Errorf("shown %v %+v, want the report's one outcome", v.repos, v.outs)
	}
	tr.err = errors.New("go: network unreachable")
	if err := in.process(ctx, report1("r2"), ingest.Attempt{N: 1}); err == nil {
		t.Fatal("no error")
	}
	if len(v.outs) != 1 {
		t.Errorf("shown %+v for a report that decided nothing", v.outs)
	}
}
