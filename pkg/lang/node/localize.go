package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/testrun"
)

// maxPassingSpectra caps the passing tests whose coverage is measured:
// each is a runner process of its own.
const maxPassingSpectra = 5

// maxCoverageBytes bounds a coverage report read back.
const maxCoverageBytes = 64 << 20

// Localize ranks the checkout's lines by how they relate to the failing
// tests ids. Each asked test, and up to maxPassingSpectra others (of the
// same files first, then of the same directories, as the files declare
// them with literal names),
// runs alone in a runner process with the runner's coverage (jest's own;
// vitest's through @vitest/coverage-v8 when the repository installs it;
// mocha and node:test through V8's, NODE_V8_COVERAGE, whose offsets are
// the files' own as neither transforms them), written into the outbox.
// A line scores by Ochiai over the asked tests that fail and the others
// that pass (testrun.Spectrum); an asked test that passes, or another
// that fails, says nothing clean and is left out. Test files' own lines
// are not ranked; at most n lines are returned.
func (d Driver) Localize(ctx context.Context, dir string, ids []string, n int) (testrun.Spectra, error) {
	dir, r, all, _, err := d.targets(dir, ids)
	if err != nil {
		return testrun.Spectra{}, err
	}
	var targets []testrun.Target
	dirs := map[string]bool{}
	for _, t := range all {
		if !t.IsPackage() {
			targets = append(targets, t)
			dirs[t.Dir] = true
		}
	}
	if len(targets) == 0 {
		return testrun.Spectra{}, fmt.Errorf("localize: none of %s is a test of %s: %w", strings.Join(ids, ", "), dir, testrun.ErrNotFound)
	}
	runner := runnerOf(dir)
	// The other tests, as their files declare them: a runner process
	// fewer than List's, and a name read from the file is one a run asks
	// for exactly.
	declared, err := r.declaredAll()
	if err != nil {
		return testrun.Spectra{}, fmt.Errorf("localize: %w", err)
	}
	var listed []testrun.Listed
	index := map[string]int{}
	for _, ft := range declared {
		if !dirs[path.Dir(ft.file)] {
			continue
		}
		i, ok := index[ft.file]
		if !ok {
			i = len(listed)
			index[ft.file] = i
			listed = append(listed, testrun.Listed{ImportPath: ft.file})
		}
		listed[i].Tests = append(listed[i].Tests, ft.t.name())
	}
	s, err := d.session(ctx, dir)
	if err != nil {
		return testrun.Spectra{}, err
	}
	defer s.done()
	s.titles = titlesOf(r)
	if runner == vitest && !s.has("@vitest/coverage-v8/package.json") {
		return testrun.Spectra{}, errors.New("localize: vitest measures coverage through @vitest/coverage-v8, which the repository does not install")
	}
	var sp testrun.Spectra
	var spectrum testrun.Spectrum
	measure := func(t testrun.Target, failing bool, k int) error {
		lines, ok, err := d.covered(ctx, s, runner, t, k, failing)
		if err != nil || !ok {
			return err
		}
		if failing {
			sp.Failing = append(sp.Failing, t.ID)
		} else {
			sp.Passing = append(sp.Passing, t.ID)
		}
		spectrum.Add(func(yield func(string, int) bool) {
			for _, l := range lines {
				if !yield(l.file, l.n) {
					return
				}
			}
		}, failing)
		return nil
	}
	k := 0
	for _, t := range targets {
		if err := measure(t, true, k); err != nil {
			return sp, err
		}
		k++
	}
	if len(sp.Failing) == 0 {
		return sp, nil
	}
	for _, id := range neighbours(listed, targets, maxPassingSpectra) {
		file, name, _ := strings.Cut(id, "::")
		if err := measure(testTarget(file, name), false, k); err != nil {
			return sp, err
		}
		k++
	}
	sp.Suspects = spectrum.Suspects(n)
	return sp, nil
}

// neighbours are up to max of the listed tests that no target asks for:
// those in the targets' files first, then the others.
func neighbours(listed []testrun.Listed, targets []testrun.Target, max int) []string {
	files := map[string]bool{}
	for _, t := range targets {
		files[t.ImportPath] = true
	}
	var near, far []string
	for _, l := range listed {
		for _, name := range l.Tests {
			id := l.ImportPath + "::" + name
			switch {
			case hasTarget(targets, id):
			case files[l.ImportPath]:
				near = append(near, id)
			default:
				far = append(far, id)
			}
		}
	}
	out := append(near, far...)
	if len(out) > max {
		out = out[:max]
	}
	return out
}

type line struct {
	file string
	n    int
}

// covered runs the test t alone with coverage and returns the lines of
// the checkout's code it ran; ok is false when it did not end as wanted
// (failing, or passing).
func (d Driver) covered(ctx context.Context, s *session, runner string, t testrun.Target, k int, failing bool) ([]line, bool, error) {
	name := fmt.Sprint("cover-", k)
	args, env, err := s.command(runner, name, []testrun.Target{t}, false)
	if err != nil {
		return nil, false, err
	}
	cov := filepath.Join(s.outbox, name)
	if err := os.Mkdir(cov, 0o755); err != nil {
		return nil, false, fmt.Errorf("localize: %w", err)
	}
	switch runner {
	case jest:
		args = append(args, "--coverage", "--coverageReporters=json", "--coverageDirectory="+cov)
	case vitest:
		args = append(args, "--coverage.enabled=true", "--coverage.provider=v8", "--coverage.reporter=json", "--coverage.reportsDirectory="+cov, "--coverage.reportOnFailure=true")
	default:
		env = append(env, "NODE_V8_COVERAGE="+cov)
	}
	res, err := s.run(ctx, runner, d.Timeout, args, env...)
	if err != nil {
		return nil, false, fmt.Errorf("localize: %w", err)
	}
	data, err := s.readOutbox(reportName(name), maxReportBytes)
	if err != nil {
		return nil, false, nil
	}
	rs, err := parseReport(data, s.dir, aliasesOf(s.dir))
	if err != nil {
		return nil, false, nil
	}
	ended := false
	if failing {
		for _, f := range rs.failed {
			ended = ended || f.ID() == t.ID
		}
	} else {
		ended = len(rs.failed) == 0 && len(rs.passed) > 0
	}
	if !ended {
		return nil, false, nil
	}
	var lines []line
	switch runner {
	case jest, vitest:
		lines, err = istanbulLines(s, name+"/coverage-final.json")
	default:
		lines, err = v8Lines(s, name)
	}
	if err != nil {
		return nil, false, fmt.Errorf("localize: %s's coverage of %s: %w (%s)", runner, t.ID, err, firstLine(res.Output))
	}
	return lines, true, nil
}

// istanbulLines reads an istanbul JSON report (jest's, vitest's): the
// lines of statements that ran, in the checkout's code files.
func istanbulLines(s *session, name string) ([]line, error) {
	data, err := s.readOutbox(name, maxCoverageBytes)
	if err != nil {
		return nil, err
	}
	var rep map[string]struct {
		Path         string `json:"path"`
		StatementMap map[string]struct {
			Start struct {
				Line int `json:"line"`
			} `json:"start"`
		} `json:"statementMap"`
		S map[string]int `json:"s"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, err
	}
	var out []line
	for key, f := range rep {
		p := f.Path
		if p == "" {
			p = key
		}
		file, ok := codeFile(s, p)
		if !ok {
			continue
		}
		seen := map[int]bool{}
		for id, st := range f.StatementMap {
			if f.S[id] > 0 && st.Start.Line > 0 && !seen[st.Start.Line] {
				seen[st.Start.Line] = true
				out = append(out, line{file, st.Start.Line})
			}
		}
	}
	return out, nil
}

// codeFile is a covered file's path relative to the checkout, ok false
// for test files and anything outside the checkout's code.
func codeFile(s *session, p string) (string, bool) {
	rel := relative(p, s.dir, aliasesOf(s.dir))
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "../") || !isSourceExt(path.Ext(rel)) || inSkippedDir(rel) || (Driver{}).IsTestFile(rel) {
		return "", false
	}
	return rel, true
}
