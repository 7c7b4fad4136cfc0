package gitlab

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/report"
)

// project is a sample repository served as a GitLab project in a
// subgroup, with a green pipeline at its last good commit and a red one
// at its head.
type project struct {
	path   string
	sample demo.Sample
	red    *gltest.Pipeline
	// failing is the test the red pipeline's report names.
	failing string
	// passes runs the project's tests at a commit of its repository on the
	// test GitLab, as its CI would, and reports whether they pass.
	passes func(t *testing.T, dir, sha string) bool
}

// projects builds the three samples and serves them: a Go module whose
// job keeps `go test -json` in its artifacts archive, a Python project
// whose job keeps pytest's JUnit as artifacts:reports:junit, and a
// TypeScript one whose job keeps vitest's JUnit the same way.
func projects(t *testing.T, gl *gltest.Server, dana *gltest.User) []*project {
	t.Helper()
	pythontest.Require(t)
	nodetest.Require(t)
	ctx := context.Background()
	drivers := lang.New(python.Driver{}, node.Driver{CacheDir: nodetest.CacheDir(t)})
	build := func(lang string) demo.Sample {
		o := demo.Options{Lang: lang, Drivers: drivers}
		if lang == "go" {
			o.Drivers = nil // the Go sample's CI is go test -json itself
		}
		s, err := demo.BuildWith(ctx, filepath.Join(t.TempDir(), lang), o)
		if err != nil {
			t.Fatalf("the %s sample: %v", lang, err)
		}
		return s
	}
	goSample, pySample, tsSample := build("go"), build("python"), build("typescript")
	ps := []*project{
		{path: "acme/payments/ledger", sample: goSample, passes: goPasses},
		{path: "acme/payments/pyshop", sample: pySample, failing: "tests/test_discount.py::test_volume_discount[at_threshold]", passes: pytestPasses},
		{path: "acme/web/storefront", sample: tsSample, failing: "src/discount.test.ts::volume discount > at the threshold", passes: vitestPasses},
	}
	for _, p := range ps {
		gl.CreateProject(p.path, p.sample.Dir)
		gl.AddPipeline(p.path, "main", p.sample.Good, "push", dana, &gltest.Job{Name: "test", Status: "success"})
	}
	ps[0].red = gl.AddPipeline(ps[0].path, "main", goSample.Head, "push", dana,
		&gltest.Job{Name: "go-test", Status: "failed", Files: map[string][]byte{"report/go-test.json": goSample.Report}, Trace: "FAIL\n"})
	ps[1].red = gl.AddPipeline(ps[1].path, "main", pySample.Head, "push", dana,
		&gltest.Job{Name: "pytest", Status: "failed", JUnit: pythontest.JUnitAt(t, pySample.Dir, pySample.Head)},
		&gltest.Job{Name: "lint", Status: "success"})
	ps[2].red = gl.AddPipeline(ps[2].path, "main", tsSample.Head, "push", dana,
		&gltest.Job{Name: "vitest", Status: "failed", JUnit: nodetest.JUnitAt(t, tsSample.Dir, tsSample.Head)})
	return ps
}

// export writes the files of sha of the repository at dir into a new
// directory, as CI's checkout.
func export(t *testing.T, dir, sha string) string {
	t.Helper()
	out := t.TempDir()
	archive := exec.Command("git", "-C", dir, "archive", "--format=tar", sha)
	untar := exec.Command("tar", "-x", "-C", out)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v", sha, err)
	}
	if err := untar.Wait(); err != nil {
		t.Fatal(err)
	}
	return out
}

// goPasses runs go test at sha.
func goPasses(t *testing.T, dir, sha string) bool {
	cmd := exec.Command("go", "test", "-count=1", "./...")
	cmd.Dir = export(t, dir, sha)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("go test at %s:\n%s", sha, out)
	}
	return err == nil
}

// pytestPasses runs pytest at sha.
func pytestPasses(t *testing.T, dir, sha string) bool {
	cmd := exec.Command(pythontest.Python, "-m", "pytest", "-q", "-p", "no:cacheprovider")
	cmd.Dir = export(t, dir, sha)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("pytest at %s:\n%s", sha, out)
	}
	return err == nil
}

// vitestPasses runs vitest at sha and reads its JUnit report.
func vitestPasses(t *testing.T, dir, sha string) bool {
	rep, err := report.Parse(nodetest.JUnitAt(t, dir, sha))
	if err != nil || rep.Total == 0 {
		t.Logf("vitest at %s: %v, %d tests", sha, err, rep.Total)
		return false
	}
	return !rep.Failed()
}
