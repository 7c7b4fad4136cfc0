package hostile

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/markdown/markdowntest"
	"github.com/redfix/redfix/pkg/report/reporttest"
)

// subtestName is the backtick repository's subtest as go test names it
// (spaces made underscores).
const subtestName = "``_@acme_![x](http:evil.example)_<img_src=x>_<!--_redfix:fingerprint=fake_-->_|_col"

// serviceCase is one repository of the corpus run through `bot serve` and
// `worker run`.
type serviceCase struct {
	failing map[string]string // the report's failing tests and messages
	// check says what went wrong ("" when the boundary held); outputs are
	// everything the outside world reads, pull requests included.
	check func(s *stack, name string, outputs map[string]string) string
}

// escapedCheck is the check of the scenarios about commands planted in a
// checkout: nothing ran outside the sandbox.
func escapedCheck(s *stack, name string, outputs map[string]string) string {
	if e := s.w.escaped(name); e != "" {
		return "a command planted in the checkout ran outside the sandbox: " + strings.TrimSpace(e)
	}
	return ""
}

var addFails = map[string]string{"TestAdd": "Add(2, 3) = -1, want 5"}

// pyAddFails is the Python calc's failing test.
var pyAddFails = map[string]string{"test_add": "add(2, 3) = -1, want 5"}

// plantedCheck is the check of the scenarios that plant files in the
// repositories' caches: no file whose name holds one of the marks is in
// the stack's cache directory.
func plantedCheck(marks ...string) func(s *stack, name string, outputs map[string]string) string {
	return func(s *stack, name string, outputs map[string]string) string {
		var found []string
		_ = filepath.WalkDir(s.cacheDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			for _, m := range marks {
				if strings.Contains(d.Name(), m) && len(found) < 5 {
					found = append(found, p)
				}
			}
			return nil
		})
		if len(found) > 0 {
			return "a test planted files in the caches later runs read: " + strings.Join(found, ", ")
		}
		return ""
	}
}

// rootFileCheck is the check of the scenarios whose tests read a
// root-only file: its content comes out nowhere.
func rootFileCheck(s *stack, name string, outputs map[string]string) string {
	var found []string
	for _, l := range s.w.leaks(outputs) {
		if strings.HasPrefix(l, "root-only file") || strings.HasPrefix(l, "/etc/shadow") {
			found = append(found, l)
		}
	}
	if len(found) > 0 {
		return "a test read a root-only file: " + strings.Join(found, "; ")
	}
	return ""
}

var serviceCases = map[string]serviceCase{
	// The .git file of a mirror's work tree, rewritten by the tests:
	// bisection's checkouts come next.
	"gitfile": {failing: addFails, check: escapedCheck},
	// sub/.git under a gitlink: the worker's diff comes next.
	"gitlink": {failing: addFails, check: escapedCheck},
	// Runner output files replaced by links to the bot's environment and
	// a host file.
	"runner-output": {failing: addFails, check: func(s *stack, name string, outputs map[string]string) string {
		if l := s.w.leaks(outputs); len(l) > 0 {
			return "leaked: " + strings.Join(l, "; ")
		}
		return ""
	}},
	// Files the tests write: the pull request holds only the agent's edit.
	"test-written": {failing: addFails, check: func(s *stack, name string, outputs map[string]string) string {
		pulls := s.pulls(name)
		if len(pulls) != 1 {
			return fmt.Sprintf("%d pull requests, want the one fix", len(pulls))
		}
		if files := s.pullFiles(name, pulls[0]); len(files) != 1 || files[0] != "calc.go" {
			return fmt.Sprintf("pull request #%d changes %v, want only calc.go", pulls[0].Number, files)
		}
		return ""
	}},
	// A subtest named in Markdown: the body shows it as text.
	// A requirement with a direct reference to a server of the host's
	// loopback: setup never reaches it.
	"py-setup-net": {failing: pyAddFails, check: func(s *stack, name string, outputs map[string]string) string {
		if n := s.w.canaryHits(); n > 0 {
			return fmt.Sprintf("repository code reached a server on the host's loopback (%d connections)", n)
		}
		return ""
	}},
	// A conftest plants a .pth into the shared virtual environment.
	"py-cache-poison": {failing: pyAddFails, check: plantedCheck("zz_redfix_planted", "planted-ran-")},
	// A Go test writes into every cache it is shown.
	"go-cache-poison": {failing: addFails, check: plantedCheck("redfix-planted")},
	// Links to a host directory wherever redfix might clean up.
	"py-link-victim": {failing: pyAddFails, check: func(s *stack, name string, outputs map[string]string) string {
		if _, err := os.Stat(filepath.Join(s.w.Victim, "keep")); err != nil {
			return "a host directory named like a checkout was removed through a link: " + err.Error()
		}
		return ""
	}},
	// Tests that read a root-only file into their failure message.
	"py-root-file": {failing: pyAddFails, check: rootFileCheck},
	"go-root-file": {failing: addFails, check: rootFileCheck},
	"backtick": {failing: map[string]string{"TestAdd_Named/" + subtestName: "Add(1, 1) = 0, want 2 ``` @acme/security"}, check: func(s *stack, name string, outputs map[string]string) string {
		for _, p := range s.pulls(name) {
			d := markdowntest.Read(p.Body)
			if len(d.Images) > 0 {
				return fmt.Sprintf("the body has images %v", d.Images)
			}
			for _, h := range d.HTML {
				if strings.Contains(h, "img") {
					return "the body has HTML " + h
				}
			}
			for _, r := range markdowntest.Refs(d.Prose) {
				if strings.Contains(r, "@acme") {
					return "the body mentions " + r
				}
			}
			if n := strings.Count(p.Body, "redfix:fingerprint="); n != 1 {
				return fmt.Sprintf("the body has %d fingerprint markers, want 1", n)
			}
			if !strings.Contains(d.Shown, "@acme") {
				return "the test's name is not shown:\n" + p.Body
			}
		}
		return ""
	}},
}

// serviceOrder is the order the scenarios are reported in.
var serviceOrder = []string{"gitfile", "gitlink", "runner-output", "test-written", "backtick",
	"py-setup-net", "py-cache-poison", "go-cache-poison", "py-link-victim", "py-root-file", "go-root-file"}

// runnable are the scenarios of names this process can run: those about a
// root-only file need redfix to run as root (an unprivileged redfix's
// tests run as its own user, who owns the file).
func runnable(names ...string) []string {
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, "-root-file") && os.Geteuid() != 0 {
			continue
		}
		out = append(out, n)
	}
	return out
}

// runService builds the corpus' service repositories, starts the stack,
// posts each one's report and waits until their tasks settle (or, with the
// boundaries off, until the scenario's check fails, which may come long
// before: a planted monitor breaks redfix's own git, and its retries take
// minutes).
func runService(t *testing.T, boundariesOff bool, names ...string) (*stack, map[string][]apiTask) {
	t.Helper()
	w := newWorld(t)
	var repos []hostileRepo
	for _, n := range names {
		repos = append(repos, buildRepo(t, n, filepath.Join(t.TempDir(), n), w.forRepo(n)))
	}
	s := startStack(t, w, boundariesOff, repos...)
	sent := time.Now()
	for _, r := range repos {
		report := goTestReport("example.com/calc", serviceCases[r.Name].failing)
		if isPython(r.Name) {
			report = pytestReport(serviceCases[r.Name].failing)
		}
		code, answer := s.post(s.repoURL(r.Name), r.Head(), report)
		if code != http.StatusAccepted {
			t.Fatalf("report of %s: %d %s", r.Name, code, answer)
		}
	}
	settled := map[string][]apiTask{}
	for _, r := range repos {
		if boundariesOff {
			testsvc.Poll(t, 10*time.Minute, "the check of "+r.Name+" fails, or its tasks settle", func() bool {
				return s.w.escaped(r.Name) != "" || s.done(r.Name) || serviceCases[r.Name].check(s, r.Name, s.outputs()) != ""
			})
			t.Logf("%s: decided %s after the reports were sent", r.Name, time.Since(sent).Round(time.Second))
			continue
		}
		settled[r.Name] = s.settled(r.Name, 10*time.Minute)
		t.Logf("%s settled %s after the reports were sent: %+v", r.Name, time.Since(sent).Round(time.Second), settled[r.Name])
	}
	return s, settled
}

// TestServiceOnHostileRepositories runs the repositories through bot serve
// and worker run: each is triaged (reproduced, bisected) in a mirror's work
// tree, repaired by the offline policy and published on the test GitHub.
func TestServiceOnHostileRepositories(t *testing.T) {
	t.Parallel()
	confined(t)
	names := runnable(serviceOrder...)
	s, settled := runService(t, false, names...)
	outputs := s.outputs()
	for _, name := range names {
		s.prOutputs(name, outputs)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if what := serviceCases[name].check(s, name, outputs); what != "" {
				t.Error(what)
			}
			pulls := s.pulls(name)
			if len(pulls) != 1 {
				t.Fatalf("%d pull requests, want the one fix; tasks: %+v", len(pulls), settled[name])
			}
			if files := s.pullFiles(name, pulls[0]); len(files) != 1 || files[0] != fixedFile(name) {
				t.Errorf("the pull request changes %v, want only %s", files, fixedFile(name))
			}
		})
	}
	if e := s.w.escaped(); e != "" {
		t.Errorf("something planted ran outside the sandbox: %s", e)
	}
	if l := s.w.leaks(outputs); len(l) > 0 {
		t.Errorf("leaked: %s", strings.Join(l, "; "))
	}
}

// TestServiceUnderAbusiveReports: a JUnit report nested to exhaust memory,
// 300 reports for repositories that do not exist, a report of 10,000
// failing tests. The bot stays up, each is settled with a reason, and a
// real report sent after them is triaged and repaired within a bound.
func TestServiceUnderAbusiveReports(t *testing.T) {
	t.Parallel()
	confined(t)
	w := newWorld(t)
	real := buildRepo(t, "test-written", filepath.Join(t.TempDir(), "real"), w.values)
	real.Name = "real"
	many := buildRepo(t, "test-written", filepath.Join(t.TempDir(), "many"), w.values)
	many.Name = "many"
	s := startStack(t, w, false, real, many)

	// A 1 MiB JUnit report of suites nested thousands deep: refused with
	// the reason, as it is read.
	code, answer := s.post(s.repoURL("real"), real.Head(), reporttest.NestedJUnit(1<<20, 4000))
	if code/100 != 4 || !strings.Contains(answer, "deep") {
		t.Errorf("nested JUnit: %d %s, want a 4xx naming the depth", code, answer)
	}
	// 300 reports of repositories the allowlist admits but that do not
	// exist: each is tried a few times, then parked.
	for i := range 300 {
		if code, answer := s.post(s.repoURL(fmt.Sprintf("missing-%d", i)), real.Head(), goTestReport("example.com/calc", addFails)); code != http.StatusAccepted {
			t.Fatalf("report %d: %d %s", i, code, answer)
		}
	}
	// 10,000 failing tests in one report: a few groups are triaged, the
	// rest are one group dropped with the reason.
	fails := map[string]string{}
	for i := range 10000 {
		fails[fmt.Sprintf("TestFake%05d", i)] = "boom"
	}
	if code, answer := s.post(s.repoURL("many"), many.Head(), goTestReport("example.com/calc", fails)); code != http.StatusAccepted {
		t.Fatalf("10,000 failures: %d %s", code, answer)
	}
	// The real one, last.
	sent := time.Now()
	if code, answer := s.post(s.repoURL("real"), real.Head(), goTestReport("example.com/calc", addFails)); code != http.StatusAccepted {
		t.Fatalf("real report: %d %s", code, answer)
	}
	tasks := s.settled("real", 8*time.Minute)
	t.Logf("the real report settled %s after it was sent, behind 300 unreachable ones and 10,000 failures", time.Since(sent).Round(time.Second))
	if len(tasks) != 1 || tasks[0].Status != "published" {
		t.Errorf("the real report's tasks: %+v, want one published", tasks)
	}
	manyTasks := s.settled("many", 8*time.Minute)
	capped := 0
	for _, mt := range manyTasks {
		if strings.Contains(mt.Reason, "beyond the cap") {
			capped++
		}
	}
	if len(manyTasks) > 6 || capped != 1 {
		t.Errorf("10,000 failures made %d tasks (%d beyond the cap), want at most 5 groups and one beyond the cap", len(manyTasks), capped)
	}
	// The 300 were parked with their reason, not left to retry for a day.
	testsvc.Poll(t, 5*time.Minute, "the 300 reports of missing repositories are parked", func() bool {
		for _, l := range strings.Split(s.get("/metrics"), "\n") {
			if strings.HasPrefix(l, `redfix_parked_messages{stream="reports"} `) {
				return strings.TrimSpace(strings.TrimPrefix(l, `redfix_parked_messages{stream="reports"} `)) == "300"
			}
		}
		return false
	})
	if !s.bot.Alive() || !s.worker.Alive() {
		t.Fatal("the bot or the worker died")
	}
	if l := w.leaks(s.outputs()); len(l) > 0 {
		t.Errorf("leaked: %s", strings.Join(l, "; "))
	}
}
