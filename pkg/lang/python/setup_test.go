package python

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/sandbox"
)

// wheel and newSimpleIndex are pythontest's.
func wheel(t *testing.T, name, version string, files map[string]string) (string, []byte) {
	t.Helper()
	return pythontest.Wheel(t, name, version, files)
}

func newSimpleIndex(t *testing.T, dists map[string][]byte) *pythontest.Index {
	t.Helper()
	return pythontest.NewIndex(t, dists)
}

// Dependencies come from the configured index into a virtual environment
// kept in the repository's cache, made once; the tests import them, and
// still have Debian's pytest.
func TestSetupInstallsFromTheIndex(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	fn1, w1 := wheel(t, "redfix-tinydep", "1.0", map[string]string{"redfix_tinydep/__init__.py": "VALUE = 42\n"})
	fn2, w2 := wheel(t, "redfix-testdep", "2.0", map[string]string{"redfix_testdep.py": "def twice(x):\n    return 2 * x\n"})
	ix := newSimpleIndex(t, map[string][]byte{fn1: w1, fn2: w2})
	d.IndexURL = ix.URL + "/simple/"
	dir := repo(t, map[string]string{
		"pyproject.toml": `[project]
name = "app"
version = "0.1"
dependencies = ["redfix-tinydep==1.0"]

[project.optional-dependencies]
test = ["app[extra]"]
extra = ["redfix-testdep>=2"]
docs = ["sphinx"]
`,
		// The project itself, and another index, are left out.
		"requirements-dev.txt": "-e .\n--index-url http://unreachable.invalid/simple\n",
		"tests/test_app.py": `import redfix_testdep
import redfix_tinydep


def test_value():
    assert redfix_tinydep.VALUE == 42
    assert redfix_testdep.twice(2) == 4
`,
	})
	if err := d.Setup(ctx, dir); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	if ix.Count() == 0 {
		t.Fatal("the index was not asked")
	}
	venvs, _ := filepath.Glob(filepath.Join(sandbox.CacheDir(ctx), "python", "venv-*", readyFile))
	if len(venvs) != 1 {
		t.Errorf("virtual environments made whole in the cache: %q", venvs)
	}
	o := mustRun(t, ctx, d, dir, 1, "tests/test_app.py::test_value")
	if !slices.Equal(o.Passed, []string{"tests/test_app.py::test_value"}) {
		t.Fatalf("the dependencies are not importable: passed %q, failed %+v, build %+v\n%s", o.Passed, o.Failed, o.Build, o.Output)
	}
	// Kept: a second setup, and the runs, make nothing again.
	n := ix.Count()
	if err := d.Setup(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if ix.Count() != n {
		t.Errorf("a second Setup asked the index again: %q", ix.Requests()[n:])
	}
	// An edited dependency file is another environment.
	writeTree(t, dir, map[string]string{"requirements.txt": "redfix-nothere==9.9\n"})
	err := d.Setup(ctx, dir)
	if err == nil {
		t.Fatal("a setup whose dependency the index lacks succeeded")
	}
	t.Logf("the failed setup: %v", err)
	for _, want := range []string{"pip install", "--index-url " + d.IndexURL, "exited with status", "redfix-nothere"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the setup's error does not say %q: %v", want, err)
		}
	}
	// A run of a checkout whose setup fails is that error, not a test
	// failure.
	if _, err := d.Run(ctx, dir, []string{"tests/test_app.py::test_value"}, 1); err == nil || !strings.Contains(err.Error(), "pip install") {
		t.Errorf("Run with a failing setup: %v", err)
	}
	if venvs, _ := filepath.Glob(filepath.Join(sandbox.CacheDir(ctx), "python", "venv-*", readyFile)); len(venvs) != 1 {
		t.Errorf("a failed setup left an environment marked whole: %q", venvs)
	}
}

// With nothing declared, the tests run on the interpreter itself.
func TestSetupWithoutDependenciesMakesNoEnvironment(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	dir := repo(t, map[string]string{"pyproject.toml": "[project]\nname = \"bare\"\n", "test_x.py": "def test_x():\n    pass\n"})
	env, err := d.prepare(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if base, _ := d.interpreter(); env.python != base {
		t.Errorf("python = %s, want the interpreter %s", env.python, base)
	}
	if _, err := os.Stat(filepath.Join(sandbox.CacheDir(ctx), "python")); err == nil {
		t.Error("a virtual environment was made for nothing")
	}
}

// An interpreter that cannot import pytest and coverage gets a virtual
// environment that can, even for a project that declares nothing: pip is
// asked for them (here Debian's site packages, which the environment
// sees, satisfy it; elsewhere the index does).
func TestSetupInstallsTheToolsAnInterpreterLacks(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	base, _ := d.interpreter()
	// In the repository's cache: the sandbox shows the host's /tmp empty.
	bare := filepath.Join(sandbox.CacheDir(ctx), "bare")
	if out, err := exec.Command(base, "-m", "venv", "--without-pip", bare).CombinedOutput(); err != nil {
		t.Fatalf("an interpreter without pytest: %v\n%s", err, out)
	}
	if exec.Command(filepath.Join(bare, "bin", "python"), "-c", "import pytest").Run() == nil {
		t.Fatal("the bare interpreter imports pytest: the test proves nothing")
	}
	d.Python = filepath.Join(bare, "bin", "python")
	dir := repo(t, map[string]string{"test_x.py": "def test_x():\n    pass\n"})
	env, err := d.prepare(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(env.python, filepath.Join(sandbox.CacheDir(ctx), "python", "venv-")) {
		t.Errorf("the tests run on %s, not in a virtual environment", env.python)
	}
	o := mustRun(t, ctx, d, dir, 1, "test_x.py::test_x")
	if !slices.Equal(o.Passed, []string{"test_x.py::test_x"}) {
		t.Errorf("passed %q\n%s", o.Passed, o.Output)
	}
}

// sdist is a source distribution of the project name at version whose
// build backend is its own backend.py (backend-path ["."], nothing to
// install first): importing it writes marker, and it builds a wheel
// holding the module files. pip runs that code when it builds the sdist.
func sdist(t *testing.T, name, version, marker string, files map[string]string) (filename string, data []byte) {
	t.Helper()
	dist := strings.ReplaceAll(name, "-", "_")
	root := fmt.Sprintf("%s-%s", dist, version)
	var mods strings.Builder
	for n, text := range files {
		fmt.Fprintf(&mods, "    %q: %q,\n", n, text)
	}
	all := map[string]string{
		"PKG-INFO": fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version),
		"pyproject.toml": `[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]
`,
		"backend.py": fmt.Sprintf(`import base64, hashlib, os, zipfile

with open(%q, "w") as f:
    f.write("the build backend ran\n")

NAME, DIST, VERSION = %q, %q, %q
FILES = {
%s}


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    info = "%%s-%%s.dist-info" %% (DIST, VERSION)
    files = dict(FILES)
    files[info + "/METADATA"] = "Metadata-Version: 2.1\nName: %%s\nVersion: %%s\n" %% (NAME, VERSION)
    files[info + "/WHEEL"] = "Wheel-Version: 1.0\nGenerator: redfix-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for n, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%%s,sha256=%%s,%%d" %% (n, digest, len(data)))
    record.append(info + "/RECORD,,")
    files[info + "/RECORD"] = "\n".join(record) + "\n"
    wheel = "%%s-%%s-py3-none-any.whl" %% (DIST, VERSION)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as z:
        for n, text in files.items():
            z.writestr(n, text)
    return wheel
`, marker, name, dist, version, mods.String()),
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range slices.Sorted(maps.Keys(all)) {
		if err := tw.WriteHeader(&tar.Header{Name: root + "/" + n, Mode: 0o644, Size: int64(len(all[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(all[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return root + ".tar.gz", buf.Bytes()
}

// pip installs wheels only: a dependency the index has only as a source
// distribution fails the setup with pip's reason, its build backend never
// runs and its sdist is never fetched. With source distributions allowed
// (the operator's switch), the same sdist is built and installed.
func TestSetupBuildsNoSourceDistributionUnlessAllowed(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	// In pip's download cache, the one directory of the repository's cache
	// that a setup may write whatever its key (sandbox.Cmd.Fill).
	marker := filepath.Join(sandbox.CacheDir(ctx), "python", "pip", "sdist-backend-ran")
	// There before the first setup, so that a backend that ran would leave
	// its mark rather than fail to.
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		t.Fatal(err)
	}
	fn, data := sdist(t, "redfix-sdistonly", "1.0", marker, map[string]string{"redfix_sdistonly.py": "BUILT = 'from source'\n"})
	ix := newSimpleIndex(t, map[string][]byte{fn: data})
	d.IndexURL = ix.URL + "/simple/"
	dir := repo(t, map[string]string{
		"requirements.txt": "redfix-sdistonly==1.0\n",
		"test_built.py":    "import redfix_sdistonly\n\n\ndef test_built():\n    assert redfix_sdistonly.BUILT == 'from source'\n",
	})
	err := d.Setup(ctx, dir)
	if err == nil {
		t.Fatal("a dependency published only as a source distribution was installed")
	}
	t.Logf("the failed setup: %v", err)
	for _, want := range []string{"--only-binary :all:", "redfix-sdistonly", "No matching distribution found", "allow_sdists"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the setup's error does not say %q: %v", want, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the sdist's build backend ran")
	}
	if ix.Count() == 0 {
		t.Fatal("the index was not asked: the test shows nothing")
	}
	for _, r := range ix.Requests() {
		if strings.HasPrefix(r, "/files/") {
			t.Errorf("the sdist was fetched: %s", r)
		}
	}

	d.AllowSdists = true
	if err := d.Setup(ctx, dir); err != nil {
		t.Fatalf("Setup with source distributions allowed: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("with source distributions allowed the build backend did not run: %v", err)
	}
	o := mustRun(t, ctx, d, dir, 1, "test_built.py::test_built")
	if !slices.Equal(o.Passed, []string{"test_built.py::test_built"}) {
		t.Fatalf("the built package is not importable: %s\n%s", o.Summary(), o.Output)
	}
}

// countingServer answers every request with 404 and counts them.
type countingServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newCountingServer(t *testing.T) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *countingServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// Direct references, URLs and version-control URLs, in a requirements
// file or pyproject.toml, are left out with notes naming them: the setup
// installs the rest from the index, and the server they name is never
// asked, even with source distributions allowed.
func TestSetupLeavesOutDirectReferences(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	d.AllowSdists = true
	ctx := confined(t)
	evil := newCountingServer(t)
	fn, w := wheel(t, "redfix-tinydep", "1.0", map[string]string{"redfix_tinydep/__init__.py": "VALUE = 42\n"})
	ix := newSimpleIndex(t, map[string][]byte{fn: w})
	d.IndexURL = ix.URL + "/simple/"
	dir := repo(t, map[string]string{
		"requirements.txt": fmt.Sprintf("redfix-tinydep==1.0\nredfix-evil @ %[1]s/evil.tar.gz\n%[1]s/bare-1.0.tar.gz\ngit+%[1]s/evil.git#egg=redfix-evilvcs\n", evil.URL),
		"pyproject.toml":   fmt.Sprintf("[project]\nname = \"app\"\ndependencies = [\"redfix-evil2 @ %s/evil2-1.0-py3-none-any.whl\"]\n", evil.URL),
	})
	env, err := d.prepare(ctx, dir)
	if got := evil.requests(); len(got) != 0 {
		t.Fatalf("the server a direct reference names was asked: %q", got)
	}
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	if ix.Count() == 0 {
		t.Fatal("the index was not asked: pip did not run")
	}
	for _, note := range []string{
		fmt.Sprintf("requirements.txt:2: %q left out: %s", "redfix-evil @ "+evil.URL+"/evil.tar.gz", whyDirect),
		fmt.Sprintf("requirements.txt:3: %q left out: %s", evil.URL+"/bare-1.0.tar.gz", whyURL),
		fmt.Sprintf("requirements.txt:4: %q left out: %s", "git+"+evil.URL+"/evil.git#egg=redfix-evilvcs", whyVCS),
		fmt.Sprintf("pyproject.toml [project] dependencies: %q left out: %s", "redfix-evil2 @ "+evil.URL+"/evil2-1.0-py3-none-any.whl", whyDirect),
	} {
		if !contains(env.notes, note) {
			t.Errorf("no note says %s\nnotes: %q", note, env.notes)
		}
	}
	for _, n := range env.notes {
		t.Logf("note: %s", n)
	}
}
