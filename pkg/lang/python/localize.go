package python

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/testrun"
)

// maxCoverageBytes bounds coverage.py's JSON report read back.
const maxCoverageBytes = 64 << 20

// coverageRC is the coverage.py configuration of Localize: the checkout's
// files only (the working directory), paths relative to it, the data file
// in the outbox. Virtual environments inside the checkout are left out.
const coverageRC = `[run]
data_file = %s
relative_files = True
source = .
omit =
    .venv/*
    venv/*
    */site-packages/*
`

// maxPassingSpectra caps the passing tests whose coverage is measured, as
// the Go driver's does.
const maxPassingSpectra = 40

// Localize ranks the checkout's lines by how they relate to the failing
// tests ids. The directories holding them are collected, and the failing
// tests run under coverage.py in one pytest process with up to
// maxPassingSpectra other tests (those of the same files first, then of
// the same directories), each test in its own coverage context named by
// its node id (redfix's pytest plugin switches them). A line scores by
// Ochiai over the asked tests that fail in that run and the others that
// pass in it (testrun.Spectrum); an asked test that passes there, or
// another that fails, says nothing clean and is left out. Test files' own
// lines are not ranked; at most n lines are returned.
func (d Driver) Localize(ctx context.Context, dir string, ids []string, n int) (testrun.Spectra, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return testrun.Spectra{}, err
	}
	r := newResolver(dir)
	targets, dirs, err := localizeTargets(r, dir, ids)
	if err != nil {
		return testrun.Spectra{}, err
	}
	env, outbox, done, err := d.session(ctx, dir)
	if err != nil {
		return testrun.Spectra{}, err
	}
	defer done()
	c, err := d.collect(ctx, env, dir, outbox, r, dirs, "localize")
	if err != nil {
		return testrun.Spectra{}, fmt.Errorf("localize: %w", err)
	}
	var known []testrun.Target
	for _, t := range targets {
		if hasUnder(c.items, t) {
			known = append(known, t)
		}
	}
	if len(known) == 0 {
		return testrun.Spectra{}, fmt.Errorf("localize: pytest collects none of %s: %w", strings.Join(ids, ", "), testrun.ErrNotFound)
	}
	targets = known
	args := append(argsOf(targets), neighbours(c.items, targets, maxPassingSpectra)...)
	rc := filepath.Join(outbox, "coveragerc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(coverageRC, filepath.Join(outbox, "coverage.data"))), 0o644); err != nil {
		return testrun.Spectra{}, fmt.Errorf("localize: %w", err)
	}
	inv, err := d.pytest(ctx, env, dir, outbox, "cover", []string{"-m", "coverage", "run", "--rcfile=" + rc},
		[]string{"-p", pluginModule, "--continue-on-collection-errors"}, args)
	if err != nil {
		return testrun.Spectra{}, fmt.Errorf("localize: %w", err)
	}
	if inv.readErr != nil {
		return testrun.Spectra{}, fmt.Errorf("localize: run %s with coverage: %v:\n%s", strings.Join(args, " "), inv.readErr, strings.TrimSpace(inv.res.Output))
	}
	sp := spectraOf(r.results(inv), targets)
	if len(sp.Failing) == 0 {
		return sp, nil
	}
	ranBy, err := d.coveredLines(ctx, env, dir, outbox, rc, sp)
	if err != nil {
		return sp, err
	}
	sp.Suspects = suspects(sp, ranBy, n)
	return sp, nil
}

// localizeTargets resolves the ids that name tests of the checkout at dir,
// and the directories to collect them from: none is ErrNotFound.
func localizeTargets(r *resolver, dir string, ids []string) ([]testrun.Target, []string, error) {
	var targets []testrun.Target
	var dirs []string
	seen := map[string]bool{}
	for _, id := range ids {
		t, err := r.resolve(id)
		if err != nil {
			if errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous) {
				continue
			}
			return nil, nil, err
		}
		targets = append(targets, t)
		d := t.Dir
		if t.IsPackage() && !strings.HasSuffix(t.ImportPath, ".py") {
			d = t.ImportPath
		}
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	if len(targets) == 0 {
		return nil, nil, fmt.Errorf("localize: none of %s is a test of %s: %w", strings.Join(ids, ", "), dir, testrun.ErrNotFound)
	}
	return targets, dirs, nil
}

// spectraOf are the ids of the coverage run's results: the targets'
// failing tests, and the passing tests that are not targets.
func spectraOf(rs results, targets []testrun.Target) testrun.Spectra {
	failing := map[string]bool{}
	passing := map[string]bool{}
	var sp testrun.Spectra
	for _, f := range rs.failed {
		id := f.ID()
		for _, t := range targets {
			if under(t, id) && !failing[id] {
				failing[id] = true
				sp.Failing = append(sp.Failing, id)
			}
		}
	}
	for _, id := range rs.passed {
		if !hasTarget(targets, id) && !passing[id] {
			passing[id] = true
			sp.Passing = append(sp.Passing, id)
		}
	}
	return sp
}

// coveredLine is a line of a source file a test ran.
type coveredLine struct {
	file string
	n    int
}

// coveredLines are the source lines each test of sp ran, from coverage.py's
// report (its contexts) of the run configured by rc.
func (d Driver) coveredLines(ctx context.Context, env pyEnv, dir, outbox, rc string, sp testrun.Spectra) (map[string][]coveredLine, error) {
	measured := map[string]bool{}
	for _, id := range append(append([]string(nil), sp.Failing...), sp.Passing...) {
		measured[id] = true
	}
	js := filepath.Join(outbox, "coverage.json")
	res, err := d.runTool(ctx, dir, outbox, env.vars(outbox), env.python, "-m", "coverage", "json", "--rcfile="+rc, "--show-contexts", "-q", "-o", js)
	if err != nil {
		return nil, fmt.Errorf("localize: %w", err)
	}
	if !res.OK() {
		return nil, fmt.Errorf("localize: coverage json: %s", strings.TrimSpace(res.Output))
	}
	data, err := readOutbox(outbox, "coverage.json", maxCoverageBytes)
	if err != nil {
		return nil, fmt.Errorf("localize: %w", err)
	}
	var cov struct {
		Files map[string]struct {
			Contexts map[string][]string `json:"contexts"`
		} `json:"files"`
	}
	if err := json.Unmarshal(data, &cov); err != nil {
		return nil, fmt.Errorf("localize: read coverage.py's report: %w", err)
	}
	ranBy := map[string][]coveredLine{}
	for file, f := range cov.Files {
		file = path.Clean(filepath.ToSlash(file))
		if (Driver{}).IsTestFile(file) || !strings.HasSuffix(file, ".py") || strings.HasPrefix(file, "../") || path.IsAbs(file) {
			continue
		}
		for ln, ctxs := range f.Contexts {
			n, err := strconv.Atoi(ln)
			if err != nil || n < 1 {
				continue
			}
			for _, c := range ctxs {
				if measured[c] {
					ranBy[c] = append(ranBy[c], coveredLine{file, n})
				}
			}
		}
	}
	return ranBy, nil
}

// suspects are the n lines most suspect by the spectrum of what sp's
// failing and passing tests ran (ranBy).
func suspects(sp testrun.Spectra, ranBy map[string][]coveredLine, n int) []testrun.Suspect {
	var spectrum testrun.Spectrum
	add := func(ids []string, failed bool) {
		for _, id := range ids {
			lines := ranBy[id]
			spectrum.Add(func(yield func(string, int) bool) {
				for _, l := range lines {
					if !yield(l.file, l.n) {
						return
					}
				}
			}, failed)
		}
	}
	add(sp.Failing, true)
	add(sp.Passing, false)
	return spectrum.Suspects(n)
}

// neighbours are up to max of the collected tests that no target asks
// for: those in the targets' files first, then the others, in pytest's
// order.
func neighbours(items []string, targets []testrun.Target, max int) []string {
	files := map[string]bool{}
	for _, t := range targets {
		files[t.ImportPath] = true
	}
	var near, far []string
	for _, id := range items {
		if hasTarget(targets, id) {
			continue
		}
		file, _, _ := strings.Cut(id, "::")
		if files[file] {
			near = append(near, id)
		} else {
			far = append(far, id)
		}
	}
	out := append(near, far...)
	if len(out) > max {
		out = out[:max]
	}
	return out
}

func hasTarget(targets []testrun.Target, id string) bool {
	for _, t := range targets {
		if under(t, id) {
			return true
		}
	}
	return false
}
