package golang

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// maxPassingSpectra caps the passing tests whose coverage is measured.
const maxPassingSpectra = 40

// Localize ranks the lines of the module at dir by how they relate to the
// failing tests ids: each failing test and up to maxPassingSpectra other
// tests of the same packages run alone with coverage of the whole module
// (the test binary is built once per package), and a line scores by Ochiai,
// ef / sqrt(F × (ef + ep)), where ef and ep are the failing and passing tests
// that ran it and F the failing tests. Lines no failing test runs are left
// out; at most n lines are returned.
func (r Runner) Localize(ctx context.Context, dir string, ids []string, n int) (testrun.Spectra, error) {
	mod, err := Module(dir)
	if err != nil {
		return testrun.Spectra{}, err
	}
	byDir := map[string][]testrun.Target{}
	var order []string
	for _, id := range ids {
		t, err := Resolve(dir, id)
		if err != nil {
			continue
		}
		if _, ok := byDir[t.Dir]; !ok {
			order = append(order, t.Dir)
		}
		byDir[t.Dir] = append(byDir[t.Dir], t)
	}
	if len(order) == 0 {
		return testrun.Spectra{}, fmt.Errorf("localize: none of %s is a test of %s: %w", strings.Join(ids, ", "), mod, testrun.ErrNotFound)
	}
	// The test binaries and their profiles go to a directory of redfix's
	// outside the checkout, shown writable to the commands; profiles are
	// read back from it as untrusted files.
	outbox, err := os.MkdirTemp("", "redfix-cover-")
	if err != nil {
		return testrun.Spectra{}, fmt.Errorf("localize: %w", err)
	}
	defer os.RemoveAll(outbox)
	var sp testrun.Spectra
	var spectrum testrun.Spectrum
	for _, d := range order {
		bin, err := r.coverBinary(ctx, dir, d, outbox)
		if err != nil {
			return sp, err
		}
		listed, err := r.List(ctx, dir, []string{d})
		if err != nil {
			return sp, err
		}
		failingFuncs := map[string]bool{}
		var units []struct {
			id, pattern string
			failing     bool
		}
		for _, t := range byDir[d] {
			failingFuncs[t.Func()] = true
			units = append(units, struct {
				id, pattern string
				failing     bool
			}{t.ID, RunPattern(t.Test), true})
		}
		passing := 0
		for _, l := range listed {
			for _, name := range l.Tests {
				if failingFuncs[name] || passing >= maxPassingSpectra {
					continue
				}
				passing++
				units = append(units, struct {
					id, pattern string
					failing     bool
				}{l.ImportPath + "." + name, RunPattern(name), false})
			}
		}
		for _, u := range units {
			lines, ok, err := r.coverOne(ctx, dir, d, bin, outbox, u.pattern, mod)
			if err != nil {
				return sp, err
			}
			if !ok {
				continue
			}
			// A "passing" test that fails here says nothing clean: skip it.
			if u.failing {
				sp.Failing = append(sp.Failing, u.id)
			} else {
				sp.Passing = append(sp.Passing, u.id)
			}
			spectrum.Add(func(yield func(string, int) bool) {
				for l := range lines {
					if !yield(l.file, l.line) {
						return
					}
				}
			}, u.failing)
		}
	}
	sp.Suspects = spectrum.Suspects(n)
	return sp, nil
}

type lineKey struct {
	file string
	line int
}

// coverBinary builds the test binary of the package at pkgDir with coverage
// of every package of the module, into outbox.
func (r Runner) coverBinary(ctx context.Context, dir, pkgDir, outbox string) (string, error) {
	f, err := os.CreateTemp(outbox, "pkg-*.test")
	if err != nil {
		return "", fmt.Errorf("localize: %w", err)
	}
	bin := f.Name()
	f.Close()
	build, _ := r.coverArgs()
	args := append([]string{"go", "test", "-c", "-cover", "-covermode=set", "-coverpkg=./..."}, build...)
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Timeout: r.Timeout, MaxOutput: 64 << 10, Outbox: outbox, Env: r.Env,
		Args: append(args, "-o", bin, pkgDir)})
	if err != nil {
		return "", fmt.Errorf("localize: build the tests of %s with coverage: %w", pkgDir, err)
	}
	if !res.OK() {
		return "", fmt.Errorf("localize: build the tests of %s with coverage: %s", pkgDir, strings.TrimSpace(res.Output))
	}
	return bin, nil
}

// maxProfileBytes bounds a coverage profile read back.
const maxProfileBytes = 64 << 20

// coverOne runs one test of the binary with a coverage profile (written
// into outbox) and returns the module's lines it ran; ok is false when the
// test did not run.
func (r Runner) coverOne(ctx context.Context, dir, pkgDir, bin, outbox, pattern, mod string) (map[lineKey]bool, bool, error) {
	run := filepath.Join(dir, filepath.FromSlash(pkgDir))
	f, err := os.CreateTemp(outbox, "profile-*.out")
	if err != nil {
		return nil, false, fmt.Errorf("localize: %w", err)
	}
	prof := f.Name()
	f.Close()
	defer os.Remove(prof)
	_, opts := r.coverArgs()
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: run, Timeout: r.Timeout, MaxOutput: 64 << 10, Outbox: outbox, Env: r.Env,
		Args: append([]string{bin, "-test.run", pattern, "-test.count", "1", "-test.coverprofile", prof}, opts...)})
	if err != nil {
		return nil, false, fmt.Errorf("localize: run %s: %w", pattern, err)
	}
	if res.TimedOut || strings.Contains(res.Output, "testing: warning: no tests to run") {
		return nil, false, nil
	}
	data, err := untrusted.ReadFile(outbox, filepath.Base(prof), maxProfileBytes)
	if err != nil {
		// The test replaced or inflated its profile: it measured nothing.
		return nil, false, nil
	}
	lines, err := readProfile(bytes.NewReader(data), mod)
	if err != nil {
		return nil, false, err
	}
	return lines, len(lines) > 0, nil
}

// readProfile reads a coverage profile's covered lines, with paths relative
// to the module root.
func readProfile(r io.Reader, mod string) (map[lineKey]bool, error) {
	lines := map[lineKey]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// example.com/m/pkg/file.go:12.5,14.2 1 1
		l := sc.Text()
		colon := strings.LastIndexByte(l, ':')
		if colon < 0 || strings.HasPrefix(l, "mode:") {
			continue
		}
		file := l[:colon]
		fields := strings.Fields(l[colon+1:])
		if len(fields) != 3 || fields[2] == "0" {
			continue
		}
		from, to, ok := strings.Cut(fields[0], ",")
		if !ok {
			continue
		}
		start, err1 := strconv.Atoi(strings.SplitN(from, ".", 2)[0])
		end, err2 := strconv.Atoi(strings.SplitN(to, ".", 2)[0])
		if err1 != nil || err2 != nil {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(file, mod), "/")
		if rel == file && mod != "" {
			continue // another module's file
		}
		for n := start; n <= end; n++ {
			lines[lineKey{rel, n}] = true
		}
	}
	return lines, sc.Err()
}
