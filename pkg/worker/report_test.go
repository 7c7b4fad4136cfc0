package worker

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/markdown/markdowntest"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/redact"
	"github.com/redfix/redfix/pkg/task"
)

// report.md shows the repository's and the agent's text as text: nothing
// in it links, embeds, mentions or closes a fence early.
func TestAttemptReportOfHostileText(t *testing.T) {
	t.Parallel()
	const evil = "`x` @org/team ![img](http://x/y.png) <img src=x> a|b **b** #12 https://e.vil\n```\n# heading"
	tk := task.Task{ID: "repair-x", Repo: "/r/@org/team`", Commit: "c0ffee",
		Failures:        []task.Failure{{Package: "p", Test: "TestX/`@org/team`", Message: evil}},
		FlakinessByTest: []task.TestFlakiness{{Test: "TestX/`@org/team`", Runs: 2, Failures: 2, Verdict: evil}},
	}
	a := &RepairReport{Dir: t.TempDir(), Started: time.Now(), Redactor: redact.New(), Task: &tk,
		Err: errors.New(evil),
		Outcome: &Outcome{Status: task.StatusFailed, Reason: evil, Gates: []task.Gate{{Name: "static", Verdict: task.GateFail, Detail: evil}},
			Agent: harness.Result{Steps: 2, Stop: "exit", Summary: evil, Patch: "+" + evil}},
	}
	a.Note("blame: %s %q", "c0ffee", evil)
	if err := a.Write(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(a.Dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	d := markdowntest.Read(string(b))
	if len(d.Links)+len(d.Images)+len(d.HTML) > 0 || len(markdowntest.Refs(d.Prose)) > 0 {
		t.Errorf("links %q, images %q, HTML %q, references %q in\n%s", d.Links, d.Images, d.HTML, markdowntest.Refs(d.Prose), b)
	}
	if d.Kinds["Heading"] != 4 || d.Kinds["FencedCodeBlock"] != 3 {
		t.Errorf("blocks %v in\n%s", d.Kinds, b)
	}
	shown := strings.ReplaceAll(d.Shown, markdown.Joiner, "")
	if flat := strings.Join(strings.Fields(evil), " "); strings.Count(shown, flat) < 7 {
		t.Errorf("the hostile text reads back as itself %d times, want 7 or more:\n%s", strings.Count(shown, flat), b)
	}

	// Each round shown: its reason, gates and patch are text too.
	a.Outcome.Rounds, a.Outcome.Steps = 1, 5
	a.Outcome.AllRounds = []task.Round{
		{Candidate: 1, N: 1, Steps: 3, Stop: "exit", Verdict: task.RoundRejected, Reason: evil, Gates: a.Outcome.Gates, Patch: "+" + evil},
		{Candidate: 1, N: 2, Steps: 2, Stop: "exit", Verdict: task.RoundTestsFail, Reason: evil, Patch: "+" + evil},
	}
	if err := a.Write(); err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(filepath.Join(a.Dir, "report.md")); err != nil {
		t.Fatal(err)
	}
	d = markdowntest.Read(string(b))
	if len(d.Links)+len(d.Images)+len(d.HTML) > 0 || len(markdowntest.Refs(d.Prose)) > 0 {
		t.Errorf("with rounds: links %q, images %q, HTML %q, references %q in\n%s", d.Links, d.Images, d.HTML, markdowntest.Refs(d.Prose), b)
	}
	if d.Kinds["Heading"] != 6 || d.Kinds["FencedCodeBlock"] != 4 {
		t.Errorf("with rounds: blocks %v in\n%s", d.Kinds, b)
	}
	shown = strings.ReplaceAll(d.Shown, markdown.Joiner, "")
	if flat := strings.Join(strings.Fields(evil), " "); strings.Count(shown, flat) < 10 {
		t.Errorf("with rounds: the hostile text reads back as itself %d times, want 10 or more:\n%s", strings.Count(shown, flat), b)
	}
}

// A published patch no judge passed is said to be unreviewed; one the
// judge passed is not.
func TestRepairReportMarksAnUnreviewedPatch(t *testing.T) {
	t.Parallel()
	for _, judge := range []string{"", task.GateNotRun, task.GatePass} {
		gates := []task.Gate{{Name: "oracle", Verdict: task.GatePass}}
		if judge != "" {
			gates = append(gates, task.Gate{Name: task.GateJudge, Verdict: judge})
		}
		a := &RepairReport{Dir: t.TempDir(), Started: time.Now(), Redactor: redact.New(),
			Outcome: &Outcome{Status: task.StatusPublished, PullRequest: "file:///pr", Gates: gates}}
		if err := a.Write(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(a.Dir, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(string(b), "Not reviewed by a model") && strings.Contains(string(b), publish.UnreviewedLabel)
		if said != (judge != task.GatePass) {
			t.Errorf("judge %q: unreviewed said %v:\n%s", judge, said, b)
		}
	}
}
