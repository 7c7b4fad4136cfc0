package gitlab

import (
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
)

// TestGitLabEndToEnd: failed pipelines of three projects in subgroups (Go,
// Python with pytest's JUnit, TypeScript with vitest's), delivered by
// GitLab's webhook to `bot serve`, each become exactly one merge request,
// pushed over smart HTTP with the token as oauth2's password, whose branch
// makes the project's tests pass and whose description carries the
// trajectory; the same delivery again, and the same pipeline from another
// delivery, make none more; a delivery with a wrong secret is refused
// (401); `/redfix explain` from a Developer of the group is answered, from
// an account that is no member refused; merging the merge request is a
// landing in /metrics and on the dashboard; the verdict shows on the red
// commit as a commit status linking to the merge request; and no secret
// shows in any merge request, note, log or answer.
func TestGitLabEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bot serve and worker run on three repairs; -short skips it")
	}
	gl := gltest.New(t)
	bot := gl.AddUser("redfix-bot", "redfix@acme.example", botToken)
	dana := gl.AddUser("dana", "dana@acme.example", "")
	eve := gl.AddUser("eve", "eve@elsewhere.example", "")
	gl.AddGroupMember("acme", bot, gltest.Developer)
	gl.AddGroupMember("acme/payments", dana, gltest.Developer)
	ps := projects(t, gl, dana)
	s := startStack(t, gl)

	red := func(p *project) gltest.Delivery {
		return gltest.Delivery{Event: gltest.PipelineHook, Payload: gl.PipelinePayload(p.path, p.red), UUID: fmt.Sprintf("pipeline-%d-first", p.red.ID)}
	}
	wrong := red(ps[0])
	wrong.UUID = "wrong-secret"
	if code, body := s.deliver("not-the-secret", wrong); code != http.StatusUnauthorized {
		t.Errorf("a delivery with a wrong secret: %d %s, want 401", code, body)
	}
	for _, p := range ps {
		if code, body := s.deliver(webhookSecret, red(p)); code != http.StatusAccepted || !strings.Contains(body, `"accepted"`) {
			t.Fatalf("the red pipeline of %s: %d %s", p.path, code, body)
		}
	}
	if out, err := exec.Command("git", "ls-remote", gl.CloneURL(ps[0].path)).CombinedOutput(); err == nil {
		t.Errorf("the test GitLab serves git without a token:\n%s", out)
	}
	for _, p := range ps {
		mr := oneMergeRequest(t, s, p)
		if !pushedAsTheBot(gl, p.path) {
			t.Errorf("%s: the merge request's branch did not come by git's smart HTTP with the token of redfix's account; git's requests: %v", p.path, gitCalls(gl))
		}
		if !p.passes(t, gl.RepoDir(p.path), mr.SHA) {
			t.Errorf("%s: the merge request's branch %s does not make the tests pass", p.path, mr.Source)
		}
		if !strings.Contains(strings.ToLower(mr.Description), "trajectory") || (p.failing != "" && !strings.Contains(mr.Description, p.failing)) {
			t.Errorf("%s: the description does not name the test or carry the trajectory:\n%s", p.path, mr.Description)
		}
	}
	// Each report came the way its job kept it: the archive, the test report.
	for _, source := range []string{"archive of job go-test (report/go-test.json)", "test report of job pytest", "test report of job vitest"} {
		if !strings.Contains(s.bot.Output(), `"sources":["`+source+`"]`) {
			t.Errorf("no pipeline's report came from the %s", source)
		}
	}
	ledger := ps[0]
	if code, body := s.deliver(webhookSecret, red(ledger)); code != http.StatusAccepted || !strings.Contains(body, "duplicate") {
		t.Errorf("the same delivery again: %d %s, want a duplicate", code, body)
	}
	again := red(ledger)
	again.UUID = "pipeline-resent-by-hand"
	if code, _ := s.deliver(webhookSecret, again); code != http.StatusAccepted {
		t.Errorf("the same pipeline from another delivery: %d", code)
	}
	testsvc.Poll(t, 2*time.Minute, "the bot sees the pipeline was triaged already", func() bool {
		return strings.Contains(s.bot.Output(), "pipeline already triaged from another delivery")
	})
	mr := oneMergeRequest(t, s, ledger)
	commands(t, s, ledger, mr, dana, eve)
	landed(t, s, ledger, mr, dana)
	outputs := map[string]string{"bot log": s.bot.Output(), "worker log": s.worker.Output(), "tasks API": s.get("/api/v1/tasks"),
		"dashboard": s.get("/"), "metrics": s.get("/metrics")}
	for _, p := range ps {
		for _, m := range s.mrs(p.path) {
			where := fmt.Sprintf("merge request !%d of %s", m.IID, p.path)
			outputs[where] = m.Title + "\n" + m.Description
			for _, n := range m.Notes {
				outputs[where+" notes"] += n.Body + "\n"
			}
			if commits, err := gl.Git(p.path, "log", "-p", "--format=%an <%ae>%n%B", p.red.SHA+".."+m.SHA); err == nil {
				outputs[where+" commits"] = commits
			} else {
				t.Errorf("the commits of %s: %v", where, err)
			}
		}
	}
	if found := leaks(outputs); len(found) > 0 {
		t.Errorf("secrets came out: %v", found)
	}
}

// oneMergeRequest waits for the project's merge request and checks it is
// the only one, redfix's, open on main.
func oneMergeRequest(t *testing.T, s *stack, p *project) gltest.MergeRequest {
	t.Helper()
	testsvc.PollSeeing(t, 10*time.Minute, "a merge request on "+p.path, func() string { return s.get("/api/v1/tasks") }, func() bool {
		return len(s.mrs(p.path)) > 0
	})
	mrs := s.mrs(p.path)
	if len(mrs) != 1 {
		t.Fatalf("%s has %d merge requests, want 1", p.path, len(mrs))
	}
	mr := mrs[0]
	if mr.State != "opened" && mr.State != "merged" || !strings.HasPrefix(mr.Source, "redfix/") || mr.Target != "main" || mr.Author.Username != "redfix-bot" {
		t.Errorf("%s: merge request %+v", p.path, mr)
	}
	return mr
}

// commands: a Developer's /redfix explain is acknowledged and answered;
// an account that is no member of the project or its groups is refused,
// its note not acknowledged.
func commands(t *testing.T, s *stack, p *project, mr gltest.MergeRequest, dev, stranger *gltest.User) {
	t.Helper()
	before := len(s.notesBy(p.path, mr.IID, "redfix-bot"))
	asked := s.gl.AddNote(p.path, mr.IID, dev, "/redfix explain")
	if code, _ := s.deliver(webhookSecret, gltest.Delivery{Event: gltest.NoteHook, Payload: s.gl.NotePayload(p.path, mr.IID, asked), UUID: "note-dana"}); code != http.StatusAccepted {
		t.Fatalf("dana's note: %d", code)
	}
	testsvc.Poll(t, 2*time.Minute, "redfix answers dana's /redfix explain", func() bool {
		return len(s.notesBy(p.path, mr.IID, "redfix-bot")) > before && s.awarded(p.path, mr.IID, asked.ID)
	})
	answers := s.notesBy(p.path, mr.IID, "redfix-bot")
	if last := answers[len(answers)-1]; strings.Contains(last, "Sorry") {
		t.Errorf("dana's command was refused: %s", last)
	}
	before = len(answers)
	refused := s.gl.AddNote(p.path, mr.IID, stranger, "/redfix explain")
	if code, _ := s.deliver(webhookSecret, gltest.Delivery{Event: gltest.NoteHook, Payload: s.gl.NotePayload(p.path, mr.IID, refused), UUID: "note-eve"}); code != http.StatusAccepted {
		t.Fatalf("eve's note: %d", code)
	}
	testsvc.Poll(t, 2*time.Minute, "redfix refuses eve's /redfix explain", func() bool {
		return len(s.notesBy(p.path, mr.IID, "redfix-bot")) > before
	})
	answers = s.notesBy(p.path, mr.IID, "redfix-bot")
	if last := answers[len(answers)-1]; !strings.Contains(last, "Sorry @eve") {
		t.Errorf("eve's command was not refused: %s", last)
	}
	if s.awarded(p.path, mr.IID, refused.ID) {
		t.Error("eve's refused command was acknowledged")
	}
}

// landed: the merge of the merge request is a landing the bot's /metrics
// and dashboard show, under the project's host and full path; the red
// commit shows the verdict as a status linking to the merge request.
func landed(t *testing.T, s *stack, p *project, mr gltest.MergeRequest, by *gltest.User) {
	t.Helper()
	s.gl.Merge(p.path, mr.IID)
	if code, body := s.deliver(webhookSecret, gltest.Delivery{Event: gltest.MergeRequestHook, Payload: s.gl.MergeRequestPayload(p.path, mr.IID, "merge", by), UUID: "merge-ledger"}); code != http.StatusAccepted {
		t.Fatalf("the merge: %d %s", code, body)
	}
	host := strings.TrimPrefix(s.gl.URL, "http://")
	landedLine := regexp.MustCompile(`redfix_fixes_landed_total\{repository="` + regexp.QuoteMeta(host+"/"+p.path) + `"\} 1\b`)
	testsvc.PollSeeing(t, 2*time.Minute, "the landing in /metrics", func() string { return grep(s.get("/metrics"), "redfix_fixes_") }, func() bool {
		return landedLine.MatchString(s.get("/metrics"))
	})
	if dash := s.get("/"); !strings.Contains(dash, host+"/"+p.path) || !strings.Contains(dash, "landed") {
		t.Errorf("the dashboard does not show the landing of %s", p.path)
	}
	testsvc.PollSeeing(t, 2*time.Minute, "the verdict on the red commit", func() string { return fmt.Sprint(s.gl.StatusesOf(p.path, p.red.SHA)) }, func() bool {
		for _, st := range s.gl.StatusesOf(p.path, p.red.SHA) {
			if st.Name == "redfix / triage" && st.TargetURL == s.gl.WebURL(p.path)+fmt.Sprintf("/-/merge_requests/%d", mr.IID) {
				return true
			}
		}
		return false
	})
}

// pushedAsTheBot reports whether a branch reached the project at path by
// git's smart HTTP, authenticated as the token's account.
func pushedAsTheBot(gl *gltest.Server, path string) bool {
	for _, c := range gl.Calls() {
		repo, push := strings.CutSuffix(c.Path, "/git-receive-pack")
		if push && strings.TrimSuffix(repo, ".git") == "/"+path && c.User == "redfix-bot" && c.Status == http.StatusOK {
			return true
		}
	}
	return false
}

// gitCalls are the test GitLab's git requests, as method, path, account
// and status.
func gitCalls(gl *gltest.Server) []string {
	var out []string
	for _, c := range gl.Calls() {
		if c.Route == "" {
			out = append(out, fmt.Sprintf("%s %s %s %d", c.Method, c.Path, c.User, c.Status))
		}
	}
	return out
}

// grep keeps the lines of text that hold s.
func grep(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
