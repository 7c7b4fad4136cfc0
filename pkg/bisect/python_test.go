package bisect_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/task"
)

func pythonContext(t *testing.T, dir string) context.Context {
	t.Helper()
	pythontest.Require(t)
	ctx, cancel := context.WithTimeout(pythontest.Confined(t, dir), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// With the Python driver as its language, bisection names pytest's tests
// (JUnit's dotted dialect resolved to the node id), runs them with pytest,
// and finds the commit that broke them.
func TestBisectPythonWithItsDriver(t *testing.T) {
	t.Parallel()
	pythontest.Require(t)
	dir, shas := pythontest.History(t, pythontest.Calc...)
	ctx := pythonContext(t, dir)
	d := python.Driver{Python: pythontest.Python}
	bis, err := bisect.Bisector{Lang: d}.Bisect(ctx, dir, shas[0], "HEAD", []string{pythontest.TestClassname + "." + pythontest.TestName})
	if err != nil {
		t.Fatal(err)
	}
	if bis.Blame != shas[pythontest.Broken] || bis.AddedTest {
		t.Errorf("blame %s (%s), want %s", task.Short(bis.Blame), bis.Subject, task.Short(shas[pythontest.Broken]))
	}
	// A test pytest does not have is not found, as go test's is not.
	if _, err := (bisect.Bisector{Lang: d}).Bisect(ctx, dir, shas[0], "HEAD", []string{"tests/test_calc.py::test_nothing"}); err == nil {
		t.Error("a test that does not exist was bisected")
	}
}

// A commit whose dependencies cannot be set up cannot be tested: it is
// skipped, as a commit that does not build is, and the search says which
// commits it could not tell apart instead of failing on the setup's error.
func TestBisectSkipsCommitsWhoseSetupFails(t *testing.T) {
	t.Parallel()
	pythontest.Require(t)
	// An index that has nothing: pip finds no distribution at once.
	index := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(index.Close)
	history := []string{
		pythontest.Calc[0],
		"calc: needs a package no index has\n\n-- requirements.txt --\nredfix-absent-package==1.0\n",
		strings.Replace(pythontest.Calc[pythontest.Broken], "-- calc/ops.py --", "-- requirements.txt --\n(deleted)\n-- calc/ops.py --", 1),
	}
	dir, shas := pythontest.History(t, history...)
	ctx := pythonContext(t, dir)
	d := python.Driver{Python: pythontest.Python, IndexURL: index.URL + "/simple/"}
	if err := d.Setup(ctx, dir); err != nil {
		t.Fatalf("setup at the head, which declares nothing: %v", err)
	}
	bis, err := bisect.Bisector{Lang: d}.Bisect(ctx, dir, shas[0], "HEAD", []string{pythontest.Test})
	if !errors.Is(err, bisect.ErrCannotBisect) {
		t.Fatalf("err = %v, want ErrCannotBisect (the commit between could not be set up)", err)
	}
	if !strings.Contains(err.Error(), task.Short(shas[1])) || bis.Blame != "" {
		t.Errorf("err %q, blame %q: want the untestable commit %s named, no blame", err, bis.Blame, task.Short(shas[1]))
	}
}

// The build bisection through a language: a package that is not there is
// missing, with the driver's reason; without a driver there is no build
// bisection at all.
func TestBuildPackageMissingThroughALanguage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	_, f, err := bisect.BuildBisector{Lang: golang.Driver{}}.BuildPackage(ctx, dir, "example.com/m/x")
	if err != nil || f == nil || !strings.HasPrefix(f.Message, "no such package here: ") || !strings.Contains(f.Message, "go.mod") {
		t.Errorf("Go's driver: %+v, %v; want the missing go.mod named", f, err)
	}
	if _, _, err := (bisect.BuildBisector{}).BuildPackage(ctx, dir, "example.com/m/x"); !errors.Is(err, lang.ErrNoDriver) {
		t.Errorf("no driver: %v, want lang.ErrNoDriver", err)
	}
	if _, err := (bisect.Bisector{}).Bisect(ctx, dir, "", "HEAD", []string{"x"}); !errors.Is(err, lang.ErrNoDriver) {
		t.Errorf("no driver: %v, want lang.ErrNoDriver", err)
	}
	_, f, err = bisect.BuildBisector{Lang: python.Driver{}}.BuildPackage(ctx, dir, "tests/test_x.py")
	if err != nil || f == nil || !strings.HasPrefix(f.Message, "no such package here: ") {
		t.Errorf("Python's driver: %+v, %v", f, err)
	}
}
