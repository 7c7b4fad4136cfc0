package python

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/untrusted"
)

//go:embed scripts/check.py
var checkScript string

// maxCheckBytes bounds the compile script's answer.
const maxCheckBytes = 4 << 20

// Check compiles the Python files (with the repository's interpreter, in
// isolated mode, writing no bytecode: compile(), not py_compile) and lints
// those that compile with pyflakes. Findings are keyed by tool, file and
// message without line numbers ("pyflakes: calc.py: 'os' imported but
// unused"; a message's own "line 3" becomes "line N"), so that a caller
// comparing with a base (findings.Compare) counts only what a change
// brought. Files that are not Python, or not regular files of the
// checkout, are passed over.
func (d Driver) Check(ctx context.Context, dir string, files []string) ([]findings.Finding, error) {
	var pyFiles []string
	for _, f := range files {
		rel, ok := cleanRel(f)
		if !ok || !strings.HasSuffix(rel, ".py") {
			continue
		}
		if fi, err := untrusted.Lstat(dir, rel); err == nil && fi.Mode().IsRegular() {
			pyFiles = append(pyFiles, rel)
		}
	}
	if len(pyFiles) == 0 {
		return nil, nil
	}
	base, err := d.interpreter()
	if err != nil {
		return nil, err
	}
	outbox, err := newOutbox()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(outbox)
	var fs []findings.Finding
	out := &cappedWriter{max: maxCheckBytes}
	res, err := d.runToolTo(ctx, dir, outbox, nil, out, append([]string{base, "-I", "-c", checkScript}, pyFiles...)...)
	if err != nil {
		return nil, fmt.Errorf("python checks: compile: %w", err)
	}
	if res.TimedOut {
		fs = append(fs, findings.Finding{Key: "compile: timed out", Text: "compile: timed out"})
	} else if !res.OK() {
		return nil, fmt.Errorf("python checks: compile with %s: exit %d: %s", base, res.ExitCode, strings.TrimSpace(res.Output))
	}
	broken := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out.buf.String()))
	sc.Buffer(make([]byte, 64<<10), maxCheckBytes)
	for sc.Scan() {
		var e struct {
			File, Kind, Message string
			Line                int
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.File == "" {
			continue
		}
		broken[e.File] = true
		fs = append(fs, findings.Finding{
			Key:  fmt.Sprintf("compile: %s: %s: %s", e.File, e.Kind, lineless(e.Message)),
			Text: fmt.Sprintf("compile: %s:%d: %s: %s", e.File, e.Line, e.Kind, e.Message),
		})
	}
	lint := d.pyflakes()
	var clean []string
	for _, f := range pyFiles {
		if !broken[f] {
			clean = append(clean, f)
		}
	}
	if lint == "" || len(clean) == 0 {
		return fs, nil
	}
	res, err = d.runTool(ctx, dir, outbox, nil, append([]string{lint}, clean...)...)
	if err != nil {
		return nil, fmt.Errorf("python checks: pyflakes: %w", err)
	}
	if res.TimedOut {
		return append(fs, findings.Finding{Key: "pyflakes: timed out", Text: "pyflakes: timed out"}), nil
	}
	fs = append(fs, pyflakesFindings(res.Output, clean)...)
	return fs, nil
}

// lineRE is a line number inside a message: "from line 3", "on line 12".
var lineRE = regexp.MustCompile(`\bline \d+`)

// lineless is a message with the line numbers it names replaced.
func lineless(msg string) string { return lineRE.ReplaceAllString(msg, "line N") }

// pyflakesLocRE is the rest of a pyflakes line after its file: "12:5: msg"
// or "12: msg".
var pyflakesLocRE = regexp.MustCompile(`^:(\d+)(?::\d+)?:? (.*)$`)

// pyflakesFindings reads pyflakes' lines, "file:line:col: message", for
// the files it was given (a file's name may hold a colon: each line is
// matched against the names given, not split).
func pyflakesFindings(out string, files []string) []findings.Finding {
	var fs []findings.Finding
	for _, l := range strings.Split(out, "\n") {
		for _, f := range files {
			rest, ok := strings.CutPrefix(l, f)
			if !ok {
				continue
			}
			m := pyflakesLocRE.FindStringSubmatch(rest)
			if m == nil {
				continue
			}
			fs = append(fs, findings.Finding{
				Key:  "pyflakes: " + f + ": " + lineless(m[2]),
				Text: "pyflakes: " + f + ":" + m[1] + ": " + m[2],
			})
			break
		}
	}
	return fs
}

// runTool runs a tool of redfix's (a check, coverage's report) in the
// checkout at dir, under the sandbox, with no network.
func (d Driver) runTool(ctx context.Context, dir, outbox string, env []string, args ...string) (sandbox.Result, error) {
	return d.runToolTo(ctx, dir, outbox, env, nil, args...)
}

func (d Driver) runToolTo(ctx context.Context, dir, outbox string, env []string, stdout *cappedWriter, args ...string) (sandbox.Result, error) {
	cmd := sandbox.Cmd{Dir: dir, Args: args, Env: env, Timeout: d.CheckTimeout, MaxOutput: d.MaxOutput, Outbox: outbox}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	return sandbox.Run(ctx, cmd)
}
