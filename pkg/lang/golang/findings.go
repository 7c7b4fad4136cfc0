package golang

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/sandbox"
)

// The static checks an edit of Go is held to: go build, go vet and gofmt
// run on a checkout, their output read into findings (pkg/findings
// compares them with a base's). Findings are keyed by tool, file and
// message, without line numbers, which a change moves; a file's
// formatting debt is keyed line by line, so that a file that was not
// gofmt-clean before does not hide, or get blamed for, the lines a change
// formats badly.

// staticChecks says what to check in a checkout; paths and patterns are relative
// to its root.
type staticChecks struct {
	Build []string // go build patterns ("./...", "./x")
	Vet   []string // go vet patterns; skipped when the build has findings
	Gofmt []string // files for gofmt
	// Timeout bounds each command; 0 means the sandbox's default.
	Timeout time.Duration
}

// runStatic runs the checks in dir and returns their findings; an error is
// the machinery failing (a cancelled context, a command that cannot start).
func runStatic(ctx context.Context, dir string, c staticChecks) ([]findings.Finding, error) {
	var all []findings.Finding
	run := func(args ...string) (sandbox.Result, error) {
		res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: args, Timeout: c.Timeout})
		if err != nil {
			return res, fmt.Errorf("%s in %s: %w", strings.Join(args, " "), dir, err)
		}
		return res, nil
	}
	built := true
	if len(c.Build) > 0 {
		// -o /dev/null: a main package would otherwise get its binary
		// written into the checkout.
		res, err := run(append([]string{"go", "build", "-o", os.DevNull}, c.Build...)...)
		if err != nil {
			return nil, err
		}
		fs := toolFindings("build", dir, res)
		built = len(fs) == 0
		all = append(all, fs...)
	}
	if len(c.Vet) > 0 && built {
		res, err := run(append([]string{"go", "vet"}, c.Vet...)...)
		if err != nil {
			return nil, err
		}
		all = append(all, toolFindings("vet", dir, res)...)
	}
	if len(c.Gofmt) > 0 {
		res, err := run(append([]string{"gofmt", "-d"}, c.Gofmt...)...)
		if err != nil {
			return nil, err
		}
		all = append(all, gofmtFindings(dir, res)...)
	}
	return all, nil
}

// positionRE matches "file.go:12:5: message" and "file.go:12: message".
var positionRE = regexp.MustCompile(`^(?:vet: )?(\S+\.go):\d+(?::\d+)?: (.*)$`)

func prefixes(dir string) []string {
	ps := []string{dir + string(filepath.Separator)}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		ps = append(ps, real+string(filepath.Separator))
	}
	return ps
}

func strip(s string, ps []string) string {
	for _, p := range ps {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// toolFindings reads go build's or go vet's output.
func toolFindings(tool, dir string, res sandbox.Result) []findings.Finding {
	if res.TimedOut {
		return []findings.Finding{{Key: tool + ": timed out", Text: tool + ": timed out"}}
	}
	if res.OK() {
		return nil
	}
	ps := prefixes(dir)
	var fs []findings.Finding
	for _, l := range strings.Split(res.Output, "\n") {
		l = strip(strings.TrimSpace(l), ps)
		m := positionRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		file := strings.TrimPrefix(m[1], "./")
		fs = append(fs, findings.Finding{Key: tool + ": " + file + ": " + m[2], Text: tool + ": " + l})
	}
	if len(fs) == 0 {
		// No position (a module or package error): the first lines say it.
		msg := strip(firstLines(res.Output, 3), ps)
		fs = append(fs, findings.Finding{Key: tool + ": " + firstLines(msg, 1), Text: tool + ": " + msg})
	}
	return fs
}

// gofmtFindings reads gofmt -d: one finding per line that gofmt would
// rewrite (a hunk that only adds lines: per line it adds), keyed by the
// file and the line's text; a file gofmt cannot parse is one finding per
// syntax error.
func gofmtFindings(dir string, res sandbox.Result) []findings.Finding {
	if res.TimedOut {
		return []findings.Finding{{Key: "gofmt: timed out", Text: "gofmt: timed out"}}
	}
	ps := prefixes(dir)
	var fs []findings.Finding
	file := ""
	var minus, plus []string
	flush := func() {
		lines, verb := minus, "rewrite"
		if len(lines) == 0 {
			lines, verb = plus, "add"
		}
		for _, l := range lines {
			if strings.TrimSpace(l) == "" && verb == "add" {
				continue
			}
			fs = append(fs, findings.Finding{
				Key:  "gofmt: " + file + ": " + verb + " " + l,
				Text: fmt.Sprintf("gofmt: %s: not gofmt-formatted: gofmt would %s %q", file, verb, strings.TrimSpace(l)),
			})
		}
		minus, plus = nil, nil
	}
	for _, l := range strings.Split(res.Output, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ "):
			flush()
			if f := strings.Fields(l[4:]); len(f) > 0 {
				file = strings.TrimPrefix(strip(f[0], ps), "b/")
			}
		case strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "diff "):
			flush()
		case strings.HasPrefix(l, "@@"):
			flush()
		case file != "" && strings.HasPrefix(l, "-"):
			minus = append(minus, l[1:])
		case file != "" && strings.HasPrefix(l, "+"):
			plus = append(plus, l[1:])
		}
	}
	flush()
	if !res.OK() {
		for _, l := range strings.Split(res.Output, "\n") {
			l = strip(strings.TrimSpace(l), ps)
			if m := positionRE.FindStringSubmatch(l); m != nil {
				fs = append(fs, findings.Finding{Key: "gofmt: " + m[1] + ": " + m[2], Text: "gofmt (syntax): " + l})
			}
		}
		if len(fs) == 0 {
			fs = append(fs, findings.Finding{Key: "gofmt: " + firstLines(res.Output, 1), Text: "gofmt: " + strip(firstLines(res.Output, 3), ps)})
		}
	}
	return fs
}

func firstLines(s string, n int) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
			if len(keep) == n {
				break
			}
		}
	}
	return strings.Join(keep, " / ")
}
