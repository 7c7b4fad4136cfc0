package python

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/testrun"
)

//go:embed scripts/redfix_pytest_plugin.py
var pluginSource string

// pluginModule is the plugin's module name, written into each outbox.
const pluginModule = "redfix_pytest_plugin"

// pytest's exit codes.
const (
	exitOK          = 0
	exitTestsFailed = 1
	exitInterrupted = 2
	exitInternal    = 3
	exitUsage       = 4
	exitNoTests     = 5
)

// argsOf are the targets as pytest takes them: node ids, files and
// directories.
func argsOf(targets []testrun.Target) []string {
	args := make([]string, len(targets))
	for i, t := range targets {
		args[i] = t.ID
	}
	return args
}

// invocation is one pytest process and the JUnit report it left.
type invocation struct {
	res sandbox.Result
	rep report.Result
	// readErr says why no report was read: not written (pytest stopped
	// before its end), refused (a link, too large), or not JUnit.
	readErr error
}

// output is pytest's output, with a line saying why no report was read.
func (inv invocation) output() string {
	out := inv.res.Output
	if inv.readErr != nil && !inv.res.TimedOut {
		out = strings.TrimRight(out, "\n") + "\n[redfix: no JUnit report read from this run of pytest: " + inv.readErr.Error() + "]\n"
	}
	return out
}

// pytestArgs are the options of every pytest invocation: no cache written
// into the checkout, node ids relative to the checkout (rootdir), and a
// JUnit report into the outbox in the dialect resolve reads, with the
// tests' captured output.
func pytestArgs(dir, junit string) []string {
	return []string{
		"-m", "pytest", "-p", "no:cacheprovider", "-q", "--color=no",
		"--rootdir=" + dir, "--junitxml=" + junit,
		"-o", "junit_family=xunit2", "-o", "junit_logging=out-err",
		"-o", "junit_log_passing_tests=false", "-o", "junit_suite_name=" + suiteName,
	}
}

// vars is the environment of the repository's commands: redfix's plugin
// on the import path, and no bytecode written.
//
// Imports write no bytecode (PYTHONDONTWRITEBYTECODE) and read what the
// interpreter's library and the virtual environment were installed with,
// beside their sources: those are read-only to the commands, and a
// command compiles the checkout's own modules in memory. A test that
// compiles on purpose (py_compile, compileall) writes into the checkout,
// which redfix cleans at every checkout (git clean) and never trusts after
// a run. A bytecode prefix (PYTHONPYCACHEPREFIX) would make every process
// compile pytest and the standard library again unless it were kept across
// runs, where a test could plant bytecode that a later run imports.
// PYTHONHASHSEED is left random, as in CI: a test that depends on the
// order of a set must show it over count runs.
func (e pyEnv) vars(outbox string, extra ...string) []string {
	importPath := append([]string{outbox}, e.path...)
	return append([]string{
		"PYTHONDONTWRITEBYTECODE=1",
		"PYTHONPATH=" + strings.Join(importPath, string(os.PathListSeparator)),
	}, extra...)
}

// session prepares the checkout at dir for an operation and makes its
// outbox; done removes the outbox.
func (d Driver) session(ctx context.Context, dir string) (env pyEnv, outbox string, done func(), err error) {
	env, err = d.prepare(ctx, dir)
	if err != nil {
		return pyEnv{}, "", nil, err
	}
	outbox, err = newOutbox()
	if err != nil {
		return pyEnv{}, "", nil, err
	}
	return env, outbox, func() { _ = os.RemoveAll(outbox) }, nil
}

// writePlugin writes redfix's pytest plugin into outbox.
func writePlugin(outbox string) error {
	p := filepath.Join(outbox, pluginModule+".py")
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := os.WriteFile(p, []byte(pluginSource), 0o644); err != nil {
		return fmt.Errorf("python: write the pytest plugin: %w", err)
	}
	return nil
}

// pytest runs one pytest process in the checkout, its JUnit report written
// into outbox as junit-<name>.xml and read back from there. pre are
// arguments before pytest's own (coverage's), extra pytest's options; the
// repository's test settings (WithTests) follow them.
func (d Driver) pytest(ctx context.Context, env pyEnv, dir, outbox, name string, pre, extra, args []string, vars ...string) (invocation, error) {
	junit := "junit-" + name + ".xml"
	cmd := append([]string{env.python}, pre...)
	cmd = append(cmd, pytestArgs(dir, filepath.Join(outbox, junit))...)
	cmd = append(cmd, extra...)
	cmd = append(cmd, d.TestArgs...)
	cmd = append(cmd, args...)
	vars = append(append([]string(nil), d.TestEnv...), vars...)
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: cmd, Env: env.vars(outbox, vars...), Timeout: d.Timeout, MaxOutput: d.MaxOutput, Outbox: outbox})
	if err != nil {
		return invocation{}, fmt.Errorf("pytest in %s: %w", dir, err)
	}
	inv := invocation{res: res}
	data, err := readOutbox(outbox, junit, report.MaxJUnitBytes)
	if err != nil {
		inv.readErr = err
		return inv, nil
	}
	rep, err := report.ParseJUnit(bytes.NewReader(data))
	if err != nil {
		inv.readErr = err
		return inv, nil
	}
	inv.rep = rep
	return inv, nil
}
