package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// Limits of the static analysis run after an edit.
const (
	gofmtTimeout = 30 * time.Second
	buildTimeout = 3 * time.Minute
	diagOutput   = 16 << 10
)

func (s *session) runTests(ctx context.Context, args RunTestsArgs) (Observation, error) {
	oracle := s.t.Tests()
	ids := args.Tests
	isOracle := len(ids) == 0
	if isOracle {
		ids = oracle
	} else {
		isOracle = s.covers(ids, oracle)
	}
	if len(ids) == 0 {
		return problem("The task names no failing tests; name the tests to run."), nil
	}
	out, err := s.h.runner.Run(ctx, s.ws.Dir, ids, 1)
	if err != nil {
		if ctx.Err() != nil {
			return Observation{}, fmt.Errorf("run tests %s: %w", strings.Join(ids, " "), ctx.Err())
		}
		if errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous) {
			return problem("Cannot run the tests: %v.", err), nil
		}
		return Observation{}, fmt.Errorf("run tests %s: %w", strings.Join(ids, " "), err)
	}
	ok := out.OK()
	if isOracle && len(oracle) > 0 {
		s.oraclePassed = ok
	}
	res := &TestsResult{OK: ok, Passed: out.Passed, Failed: capFailures(out.Failed), Build: capFailures(out.Build)}

	var b strings.Builder
	verdict := "PASS"
	if !ok {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "%s: %s", verdict, out.Summary())
	if isOracle {
		b.WriteString(" (the task's failing tests)")
	}
	b.WriteString("\n")
	for _, f := range out.Build {
		what := f.Package
		if what == "" {
			what = "the tests"
		}
		fmt.Fprintf(&b, "\n--- BUILD FAILED: %s\n", what)
		writeFailure(&b, f)
	}
	for _, f := range out.Failed {
		fmt.Fprintf(&b, "\n--- FAIL: %s\n", f.ID())
		writeFailure(&b, f)
	}
	if len(out.Missing) > 0 {
		fmt.Fprintf(&b, "\nDid not run: %s\n", strings.Join(out.Missing, ", "))
	}
	if out.TimedOut {
		b.WriteString("\nThe run timed out; output so far:\n" + indent(trimLines(out.Output, failureLines), "  ") + "\n")
	}
	if len(out.Passed) > 0 {
		shown := out.Passed
		more := ""
		if len(shown) > 20 {
			more = fmt.Sprintf(" and %d more", len(shown)-20)
			shown = shown[:20]
		}
		fmt.Fprintf(&b, "\nPassed: %s%s\n", strings.Join(shown, ", "), more)
	}
	return Observation{Content: b.String(), IsError: !ok, Tests: res}, nil
}

func writeFailure(b *strings.Builder, f task.Failure) {
	if f.Message != "" {
		fmt.Fprintf(b, "message: %s\n", f.Message)
	}
	if len(f.Frames) > 0 {
		fmt.Fprintf(b, "frames: %s\n", strings.Join(f.Frames, ", "))
	}
	if out := strings.TrimSpace(f.Output); out != "" {
		b.WriteString("output:\n" + indent(trimLines(out, failureLines), "  ") + "\n")
	}
}

func capFailures(fs []task.Failure) []task.Failure {
	if len(fs) == 0 {
		return nil
	}
	out := make([]task.Failure, len(fs))
	for i, f := range fs {
		f.Output = trimLines(f.Output, failureLines*2)
		out[i] = f
	}
	return out
}

// covers reports whether the tests ids include every oracle test (a parent
// test covers its subtests). Ids are compared in canonical form.
func (s *session) covers(ids, oracle []string) bool {
	if len(oracle) == 0 {
		return false
	}
	canon := func(id string) string {
		if t, err := testrun.Resolve(s.ws.Dir, id); err == nil {
			return t.ID
		}
		return id
	}
	have := make([]string, len(ids))
	for i, id := range ids {
		have[i] = canon(id)
	}
	for _, o := range oracle {
		c := canon(o)
		found := false
		for _, h := range have {
			if h == c || strings.HasPrefix(c, h+"/") {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (s *session) edit(ctx context.Context, args EditArgs) (Observation, error) {
	if strings.TrimSpace(args.Path) == "" {
		return problem("A path is required: edit changes one file."), nil
	}
	abs, rel, bad := s.resolve(args.Path)
	if bad != nil {
		return *bad, nil
	}
	if rel == "." {
		return problem("%q is the repository root, not a file.", args.Path), nil
	}
	exists := true
	var content string
	mode := fs.FileMode(0o644)
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		exists = false
	case err != nil:
		return problem("Cannot read %s: %v.", rel, err), nil
	case info.IsDir():
		return problem("%s is a directory; edit changes one file.", rel), nil
	default:
		data, err := os.ReadFile(abs)
		if err != nil {
			return problem("Cannot read %s: %v.", rel, err), nil
		}
		content, mode = string(data), info.Mode().Perm()
	}

	text := args.Blocks
	via := ""
	if strings.TrimSpace(text) == "" {
		switch {
		case strings.TrimSpace(args.Instructions) == "":
			return problem("Give blocks (SEARCH/REPLACE) or instructions for %s.", rel), nil
		case s.h.patcher == nil:
			return problem("No patcher is configured to turn instructions into edits; give SEARCH/REPLACE blocks:\n%s", BlockFormat), nil
		}
		text, err = s.h.patcher.Blocks(ctx, rel, content, args.Instructions)
		if err != nil {
			return Observation{}, fmt.Errorf("patcher writing blocks for %s: %w", rel, err)
		}
		via = " (written by the patcher from the instructions)"
	}
	blocks, err := ParseBlocks(text)
	if err != nil {
		return editFailed("The blocks%s for %s cannot be read: %v\nThe format is:\n%s", via, rel, err, BlockFormat), nil
	}
	if !exists {
		for i, b := range blocks {
			if strings.TrimSpace(b.Search) != "" {
				return editFailed("%s does not exist; block %d of %d searches it. To create the file, give one block with an empty SEARCH.%s",
					rel, i+1, len(blocks), s.suggestFiles(ctx, rel)), nil
			}
		}
	}
	updated, err := ApplyBlocks(content, blocks)
	if err != nil {
		return editFailed("The edit%s of %s was not applied: %v", via, rel, err), nil
	}
	if exists && updated == content {
		return editFailed("The blocks%s change nothing in %s.", via, rel), nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return Observation{}, fmt.Errorf("make the directory of %s: %w", rel, err)
	}
	if err := os.WriteFile(abs, []byte(updated), mode); err != nil {
		return Observation{}, fmt.Errorf("write %s: %w", rel, err)
	}
	// The tests passed, if they did, without this change.
	s.oraclePassed = false
	s.idxStale = true

	diff, err := s.fileDiff(ctx, rel)
	if err != nil {
		return Observation{}, err
	}
	diags, err := s.diagnose(ctx, abs, rel)
	if err != nil {
		return Observation{}, err
	}
	var b strings.Builder
	verb := "Edited"
	if !exists {
		verb = "Created"
	}
	fmt.Fprintf(&b, "%s %s: %s applied%s.\n\n", verb, rel, plural(len(blocks), "block", "blocks"), via)
	shownDiff := clip.Middle(diff, max(s.h.cfg.OutputLimit/2, 1000))
	b.WriteString(shownDiff)
	if diags == "" {
		b.WriteString("\nStatic analysis (gofmt, go build, go vet): clean.\n")
	} else {
		b.WriteString("\nStatic analysis found problems:\n" + diags + "\n")
	}
	return Observation{Content: b.String(), Edit: &EditResult{Applied: true, Diff: shownDiff, Diagnostics: diags}}, nil
}

func editFailed(format string, args ...any) Observation {
	o := problem(format, args...)
	o.Edit = &EditResult{Applied: false}
	return o
}

// fileDiff is one file's change against HEAD, a new file included.
func (s *session) fileDiff(ctx context.Context, rel string) (string, error) {
	// Intent-to-add makes a new file show in the diff; an ignored file
	// refuses it and then shows no diff, which is true enough.
	_, _ = s.ws.Repo.Git(ctx, "add", "-N", "--", rel)
	out, err := s.ws.Repo.Git(ctx, "diff", "--no-color", "HEAD", "--", rel)
	if err != nil {
		return "", fmt.Errorf("diff of %s: %w", rel, err)
	}
	return out, nil
}

// diagnose runs gofmt on an edited Go file, and go build then go vet on its
// package; it returns their findings, empty when clean. Non-Go files have
// none.
func (s *session) diagnose(ctx context.Context, abs, rel string) (string, error) {
	if !strings.HasSuffix(rel, ".go") {
		return "", nil
	}
	var out []string
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: s.ws.Dir, Args: []string{"gofmt", "-l", abs}, Timeout: gofmtTimeout, MaxOutput: diagOutput})
	if err != nil {
		return "", fmt.Errorf("gofmt %s: %w", rel, err)
	}
	switch {
	case res.TimedOut:
		out = append(out, "gofmt: timed out")
	case !res.OK():
		out = append(out, "gofmt (syntax):\n"+strings.ReplaceAll(strings.TrimSpace(res.Output), abs, rel))
	case strings.TrimSpace(res.Output) != "":
		d, err := sandbox.Run(ctx, sandbox.Cmd{Dir: s.ws.Dir, Args: []string{"gofmt", "-d", abs}, Timeout: gofmtTimeout, MaxOutput: diagOutput})
		if err != nil {
			return "", fmt.Errorf("gofmt -d %s: %w", rel, err)
		}
		out = append(out, fmt.Sprintf("gofmt: %s is not gofmt-formatted; gofmt would change:\n%s", rel, trimLines(strings.ReplaceAll(d.Output, abs, rel), 40)))
	}
	mod, pkg, ok := s.packageOf(abs)
	if !ok {
		return strings.Join(out, "\n\n"), nil
	}
	for _, tool := range [][]string{{"go", "build", "-o", os.DevNull, pkg}, {"go", "vet", pkg}} {
		res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: mod, Args: tool, Timeout: buildTimeout, MaxOutput: diagOutput})
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", tool[1], pkg, err)
		}
		name := strings.Join([]string{tool[0], tool[1], pkg}, " ")
		text := strings.TrimSpace(res.Output)
		if res.TimedOut {
			out = append(out, name+": timed out")
			break
		}
		if res.OK() || strings.Contains(text, "no non-test Go files") {
			continue
		}
		out = append(out, name+":\n"+trimLines(text, 60))
		break // vet repeats what build found
	}
	return strings.Join(out, "\n\n"), nil
}

// packageOf finds the module holding the file at abs and the package's
// relative path ("./x/y") in it; ok is false outside any module or in
// directories the go command ignores.
func (s *session) packageOf(abs string) (mod, pkg string, ok bool) {
	dir := filepath.Dir(abs)
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			rel, err := filepath.Rel(d, dir)
			if err != nil {
				return "", "", false
			}
			for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
				if part == "testdata" || part == "vendor" || (part != "." && (strings.HasPrefix(part, "_") || strings.HasPrefix(part, "."))) {
					return "", "", false
				}
			}
			if rel == "." {
				return d, ".", true
			}
			return d, "./" + filepath.ToSlash(rel), true
		}
		if d == s.ws.Dir || d == filepath.Dir(d) || !strings.HasPrefix(d, s.ws.Dir) {
			return "", "", false
		}
	}
}
