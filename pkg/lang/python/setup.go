package python

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/untrusted"
)

//go:embed scripts/deps.py
var depsScript string

// recipe names how a virtual environment is made: a change to the making
// changes it, and with it every environment's key.
const recipe = "redfix-python-venv/3"

// readyFile marks a virtual environment made whole; it holds the key.
const readyFile = ".redfix-ready"

// pyEnv is what the repository's commands run with.
type pyEnv struct {
	// python runs the tests: a virtual environment's interpreter, or base.
	python string
	// base is the interpreter itself.
	base string
	// path are directories put before the checkout's on the import path:
	// a src layout's src.
	path []string
	// notes say what of the declared dependencies was left out; a setup
	// that fails says them.
	notes []string
}

// Setup makes the checkout's declared dependencies importable by its tests
// (see prepare). Run, RunPackages, Build, List and Localize set up first
// too when the checkout's dependencies changed since (an edited
// requirements file): Setup is where a job pays for it up front.
func (d Driver) Setup(ctx context.Context, dir string) error {
	_, err := d.prepare(ctx, dir)
	return err
}

// prepare finds what the checkout at dir declares and returns the
// environment its tests run in.
//
// The dependencies are read from requirements*.txt and requirements/*.txt
// (see readRequirements), pyproject.toml's [project] dependencies, its
// optional-dependencies and dependency-groups named test, tests, testing
// or dev, and setup.cfg's install_requires and extras_require of the same
// names; setup.py is not run, Poetry's tables and tox.ini's deps are not
// read. pytest and coverage come from the interpreter's own site packages
// (Debian's python3-pytest and python3-coverage), and are installed when
// it has none.
//
// With nothing to install, the tests run on the interpreter itself: a
// virtual environment of nothing would be the same interpreter with an
// empty directory more. Otherwise they run in a virtual environment made
// with --system-site-packages, one per interpreter, index and set of
// requirements, kept under the repository's cache directory across jobs
// (sandbox.CacheDir) and made once: the commands that make it are the
// only ones that may reach the network (sandbox.Cmd.Setup), and a setup
// that fails is an error naming the command and its output. pip installs
// wheels only unless the driver allows source distributions (AllowSdists):
// nothing of the index's or the repository's choosing is built, so no
// build backend runs with the network.
func (d Driver) prepare(ctx context.Context, dir string) (pyEnv, error) {
	base, err := d.interpreter()
	if err != nil {
		return pyEnv{}, err
	}
	env := pyEnv{python: base, base: base}
	if fi, err := untrusted.Lstat(dir, "src"); err == nil && fi.IsDir() {
		if _, err := untrusted.Lstat(dir, "src/__init__.py"); err != nil {
			env.path = append(env.path, filepath.Join(dir, "src"))
		}
	}
	decl := readRequirements(dir)
	env.notes = decl.notes
	outbox, err := newOutbox()
	if err != nil {
		return pyEnv{}, err
	}
	defer os.RemoveAll(outbox)
	probe, err := d.probe(ctx, base, dir, outbox, decl.named)
	if err != nil {
		return pyEnv{}, err
	}
	env.notes = append(env.notes, probe.Notes...)
	reqs, optional, notes := d.chosen(decl, probe.TestsDeclared)
	env.notes = append(env.notes, notes...)
	for _, r := range probe.Requires {
		req, why := requirement(r.Requirement)
		switch {
		case why != "":
			env.notes = append(env.notes, fmt.Sprintf("%s: %q left out: %s", r.From, r.Requirement, why))
		case r.Optional:
			optional = append(optional, req)
		default:
			reqs = append(reqs, req)
		}
	}
	reqs = append(reqs, probe.Missing...)
	if len(reqs)+len(optional) == 0 {
		return env, nil
	}
	key := venvKey(base, probe.Version, d.IndexURL, d.AllowSdists, reqs, optional, decl.constraints)
	venv := filepath.Join(sandbox.CacheDir(ctx), "python", "venv-"+key[:24])
	env.python = filepath.Join(venv, "bin", "python")
	if ready(venv, key) {
		return env, nil
	}
	if err := d.makeVenv(ctx, base, venv, key, outbox, wants{reqs, optional, decl.constraints}, env.notes); err != nil {
		return pyEnv{}, err
	}
	return env, nil
}

// probed is what the dependency script says (scripts/deps.py).
type probed struct {
	Requires      []declaredBy `json:"requires"`
	Missing       []string     `json:"missing"`
	Version       string       `json:"version"`
	Notes         []string     `json:"notes"`
	TestsDeclared bool         `json:"tests_declared"`
}

// maxProbeBytes bounds the dependency script's answer.
const maxProbeBytes = 4 << 20

// probe runs the dependency script on copies of the checkout's
// pyproject.toml and setup.cfg, made in outbox by redfix (sized, never
// through a link), in isolated mode: nothing of the checkout is imported.
// It is told the groups asked for and those the requirement files are
// named for (fileGroups), to choose the same groups.
func (d Driver) probe(ctx context.Context, base, dir, outbox string, fileGroups []string) (probed, error) {
	args := []string{base, "-I", "-c", depsScript}
	for _, name := range []string{"pyproject.toml", "setup.cfg"} {
		data, err := untrusted.ReadFile(dir, name, maxDepFileBytes)
		if err != nil {
			args = append(args, "")
			continue
		}
		cp := filepath.Join(outbox, name)
		if err := os.WriteFile(cp, data, 0o644); err != nil {
			return probed{}, fmt.Errorf("python setup: %w", err)
		}
		args = append(args, cp)
	}
	args = append(args, strings.Join(d.asked(), ","), strings.Join(fileGroups, ","))
	out := &cappedWriter{max: maxProbeBytes}
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: outbox, Args: args, Timeout: d.CheckTimeout, MaxOutput: d.MaxOutput, Stdout: out, Outbox: outbox})
	if err != nil {
		return probed{}, fmt.Errorf("python setup: read the declared dependencies: %w", err)
	}
	if !res.OK() || out.over {
		return probed{}, fmt.Errorf("python setup: read the declared dependencies with %s: exit %d: %s", base, res.ExitCode, strings.TrimSpace(res.Output))
	}
	var p probed
	if err := json.Unmarshal(out.buf.Bytes(), &p); err != nil {
		return probed{}, fmt.Errorf("python setup: read the declared dependencies: %w", err)
	}
	return p, nil
}

// venvKey names a virtual environment by what makes it.
func venvKey(base, version, index string, sdists bool, reqs, optional, constraints []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\nsdists=%v\n", recipe, base, version, index, sdists)
	if real, err := filepath.EvalSymlinks(base); err == nil {
		fmt.Fprintf(h, "%s\n", real)
	}
	for _, r := range reqs {
		fmt.Fprintf(h, "R %s\n", r)
	}
	for _, o := range optional {
		fmt.Fprintf(h, "O %s\n", o)
	}
	for _, c := range constraints {
		fmt.Fprintf(h, "C %s\n", c)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ready reports a virtual environment made whole for key.
func ready(venv, key string) bool {
	data, err := untrusted.ReadFile(venv, readyFile, 256)
	return err == nil && string(data) == key
}

// wants are what a virtual environment is made of: the requirements
// whose install must succeed, those whose install may fail (a warning),
// and the constraints.
type wants struct{ required, optional, constraints []string }

// makeVenv makes the virtual environment venv, under a lock that jobs of
// the same repository share, unless another job made it meanwhile. The
// environment is the setup's to fill (sandbox.Cmd.Fill), with pip's
// download cache; every other command sees both read-only.
func (d Driver) makeVenv(ctx context.Context, base, venv, key, outbox string, w wants, notes []string) error {
	if err := os.MkdirAll(filepath.Dir(venv), 0o755); err != nil {
		return fmt.Errorf("python setup: %w", err)
	}
	unlock, err := lock(ctx, venv+".lock")
	if err != nil {
		return fmt.Errorf("python setup: %w", err)
	}
	defer unlock()
	if ready(venv, key) {
		return nil
	}
	// What a job that died halfway left (a directory only a setup wrote,
	// removed without following a link in it).
	if err := os.RemoveAll(venv); err != nil {
		return fmt.Errorf("python setup: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(venv)
		}
	}()
	s := setup{d: d, outbox: outbox, fill: []string{venv, filepath.Join(filepath.Dir(venv), "pip")}}
	py := filepath.Join(venv, "bin", "python")
	// pip is taken from the system's site packages (Debian's python3-pip)
	// when it is there: bootstrapping one into each environment costs
	// seconds.
	if err := s.cmd(ctx, base, "-m", "venv", "--system-site-packages", "--without-pip", venv); err != nil {
		return err
	}
	if _, err := s.run(ctx, py, "-m", "pip", "--version"); err != nil {
		if err := s.cmd(ctx, py, "-m", "ensurepip", "--default-pip"); err != nil {
			return err
		}
	}
	if s.registries, err = d.registries(base, py); err != nil {
		return err
	}
	all := append(append([]string(nil), w.required...), w.optional...)
	err = s.install(ctx, py, "requirements", all, w.constraints)
	if err != nil && len(w.optional) > 0 {
		// Something did not install: the required alone must, and each
		// optional requirement may fail, a warning.
		err = nil
		if len(w.required) > 0 {
			err = s.install(ctx, py, "required", w.required, w.constraints)
		}
		if err == nil {
			s.installEach(ctx, py, w.optional, w.constraints)
		}
	}
	if err != nil {
		msg := fmt.Sprintf("%v\n(the requirements: %s", err, strings.Join(w.required, "; "))
		if !d.AllowSdists {
			msg += "; wheels only: what the index has only as a source distribution is not built unless the driver allows it (allow_sdists)"
		}
		if len(notes) > 0 {
			msg += "; left out of the declared dependencies: " + strings.Join(notes, "; ")
		}
		return errors.New(msg + ")")
	}
	// Written beneath the environment, through no link a setup made.
	if err := untrusted.WriteFile(venv, readyFile, []byte(key), 0o644); err != nil {
		return fmt.Errorf("python setup: %w", err)
	}
	ok = true
	return nil
}

// install pip-installs reqs (with constraints) into the environment of py,
// from a requirements file named for what it holds; an error names the
// command and its output.
func (s setup) install(ctx context.Context, py, name string, reqs, constraints []string) error {
	lines := append([]string(nil), reqs...)
	if len(constraints) > 0 {
		cFile := filepath.Join(s.outbox, "constraints.txt")
		if err := os.WriteFile(cFile, []byte(strings.Join(constraints, "\n")+"\n"), 0o644); err != nil {
			return fmt.Errorf("python setup: %w", err)
		}
		lines = append([]string{"-c " + cFile}, lines...)
	}
	reqFile := filepath.Join(s.outbox, name+".txt")
	if err := os.WriteFile(reqFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("python setup: %w", err)
	}
	args := []string{py, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--progress-bar", "off"}
	if s.d.IndexURL != "" {
		args = append(args, "--index-url", s.d.IndexURL)
	}
	if !s.d.AllowSdists && !untrusted.Trusting {
		args = append(args, "--only-binary", ":all:")
	}
	return s.cmd(ctx, append(args, "-r", reqFile)...)
}

// installEach installs the optional requirements one by one (with their
// files' global options), after the required ones: each that fails is a
// warning naming it, and the setup goes on.
func (s setup) installEach(ctx context.Context, py string, optional, constraints []string) {
	var opts, reqs []string
	for _, r := range optional {
		if strings.HasPrefix(r, "-") {
			opts = append(opts, r)
		} else {
			reqs = append(reqs, r)
		}
	}
	for i, r := range reqs {
		if err := s.install(ctx, py, fmt.Sprintf("optional-%d", i), append(append([]string(nil), opts...), r), constraints); err != nil {
			s.d.log().Warn("python setup: a requirement the tests' groups do not name did not install; the setup goes on without it",
				zap.String("requirement", r), zap.String("error", clip.Middle(err.Error(), 2<<10)))
		}
	}
}

// setup runs a virtual environment's setup commands: the directories they
// fill, and the registries they reach.
type setup struct {
	d          Driver
	outbox     string
	fill       []string
	registries []string
}

// cmd runs a setup command, an error naming it and its output when it
// fails.
func (s setup) cmd(ctx context.Context, args ...string) error {
	_, err := s.run(ctx, args...)
	return err
}

// maxSetupOutput caps the output an error of setup carries.
const maxSetupOutput = 8 << 10

func (s setup) run(ctx context.Context, args ...string) (sandbox.Result, error) {
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Dir: s.outbox, Args: args, Setup: true, Outbox: s.outbox,
		Fill: s.fill, Registries: s.registries,
		Timeout: s.d.SetupTimeout, MaxOutput: s.d.MaxOutput,
		Env: []string{
			"PIP_CACHE_DIR=" + s.fill[1],
			"PIP_DISABLE_PIP_VERSION_CHECK=1",
			"PIP_NO_INPUT=1",
		},
	})
	cmd := strings.Join(args, " ")
	switch {
	case err != nil:
		return res, fmt.Errorf("python setup: %s: %w", cmd, err)
	case res.TimedOut:
		return res, fmt.Errorf("python setup: %s timed out after %s:\n%s", cmd, res.Duration.Round(time.Second), clip.Middle(strings.TrimSpace(res.Output), maxSetupOutput))
	case res.ExitCode != 0:
		return res, fmt.Errorf("python setup: %s exited with status %d:\n%s", cmd, res.ExitCode, clip.Middle(strings.TrimSpace(res.Output), maxSetupOutput))
	}
	return res, nil
}

var indexes sync.Map // interpreter → the registries of pip's default index

// registries are the endpoints pip installs from: the configured index,
// or pip's own default index and the host it serves files from, asked of
// the environment's pip (py) once per interpreter (base).
func (d Driver) registries(base, py string) ([]string, error) {
	if d.IndexURL != "" {
		return []string{d.IndexURL}, nil
	}
	if v, ok := indexes.Load(base); ok {
		return v.([]string), nil
	}
	out, err := exec.Command(py, "-I", "-c", "from pip._internal.models.index import PyPI as i; print(i.simple_url); print(i.file_storage_domain)").Output()
	if err != nil {
		return nil, fmt.Errorf("python setup: ask %s's pip for its default index (or set the driver's index_url): %w", base, err)
	}
	var regs []string
	for i, line := range strings.Fields(string(out)) {
		if i == 1 && !strings.Contains(line, "://") {
			line = "https://" + line
		}
		regs = append(regs, line)
	}
	indexes.Store(base, regs)
	return regs, nil
}

// lock takes an exclusive lock on the file name, waiting for it as long as
// ctx lets; unlock releases it.
func lock(ctx context.Context, name string) (unlock func(), err error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for the lock %s: %w", name, ctx.Err())
		case <-tick.C:
		}
	}
}

// newOutbox makes a directory of redfix's, outside any checkout, that
// commands may write their reports into.
func newOutbox() (string, error) {
	dir, err := os.MkdirTemp("", "redfix-python-")
	if err != nil {
		return "", fmt.Errorf("python: outbox: %w", err)
	}
	return dir, nil
}

// cappedWriter keeps what is written up to max bytes, and says when more
// came.
type cappedWriter struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room < len(p) {
		w.over = true
		if room > 0 {
			w.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return w.buf.Write(p)
}

// readOutbox reads a report a command wrote into outbox: a regular file,
// never through a link, at most max bytes.
func readOutbox(outbox, name string, max int64) ([]byte, error) {
	data, err := untrusted.ReadFile(outbox, name, max)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s was not written: %w", name, err)
	}
	return data, err
}
