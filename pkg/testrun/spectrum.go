package testrun

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/untrusted"
)

// maxPassingSpectra caps the passing tests whose coverage is measured.
const maxPassingSpectra = 40

// Suspect is a source line ranked by spectrum-based fault localization.
type Suspect struct {
	File  string  // relative to the module root
	Line  int     // 1-based
	Score float64 // Ochiai: 1 when every failing test and no passing test runs it
	// Failing and Passing count the tests that ran the line.
	Failing, Passing int
}

// Spectra is the outcome of Localize.
type Spectra struct {
	Suspects []Suspect // most suspicious first
	Failing  []string  // the failing tests measured
	Passing  []string  // the passing tests measured
}

// Localize ranks the lines of the module at dir by how they relate to the
// failing tests ids: each failing test and up to maxPassingSpectra other
// tests of the same packages run alone with coverage of the whole module
// (the test binary is built once per package), and a line scores by Ochiai,
// ef / sqrt(F × (ef + ep)), where ef and ep are the failing and passing tests
// that ran it and F the failing tests. Lines no failing test runs are left
// out; at most n lines are returned.
func (r Runner) Localize(ctx context.Context, dir string, ids []string, n int) (Spectra, error) {
	mod, err := Module(dir)
	if err != nil {
		return Spectra{}, err
	}
	byDir := map[string][]Target{}
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
		return Spectra{}, fmt.Errorf("localize: none of %s is a test of %s: %w", strings.Join(ids, ", "), mod, ErrNotFound)
	}
	// The test binaries and their profiles go to a directory of redfix's
	// outside the checkout, shown writable to the commands; profiles are
	// read back from it as untrusted files.
	outbox, err := os.MkdirTemp("", "redfix-cover-")
	if err != nil {
		return Spectra{}, fmt.Errorf("localize: %w", err)
	}
	defer os.RemoveAll(outbox)
	var sp Spectra
	var spectrum Spectrum
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

// Spectrum counts, line by line, the failing and the passing tests that ran
// it, and ranks the lines by Ochiai as Localize does. Other languages'
// drivers measure their tests' coverage their own way and rank with it.
type Spectrum struct {
	lines   map[lineKey]*lineCounts
	failing int
}

// lineCounts are the failing (ef) and passing (ep) tests that ran a line.
type lineCounts struct{ ef, ep int }

// Add records one test, failing or passing, and the lines it ran: file
// (relative to the checkout's root) and 1-based line, each once.
func (s *Spectrum) Add(lines iter.Seq2[string, int], failing bool) {
	if s.lines == nil {
		s.lines = map[lineKey]*lineCounts{}
	}
	if failing {
		s.failing++
	}
	for file, line := range lines {
		k := lineKey{file, line}
		c := s.lines[k]
		if c == nil {
			c = &lineCounts{}
			s.lines[k] = c
		}
		if failing {
			c.ef++
		} else {
			c.ep++
		}
	}
}

// Suspects ranks the lines that a failing test ran by Ochiai, ef / sqrt(F
// × (ef + ep)), most suspicious first (ties: fewer passing tests, then by
// file and line); at most n when n > 0.
func (s *Spectrum) Suspects(n int) []Suspect {
	var out []Suspect
	F := float64(s.failing)
	for l, c := range s.lines {
		if c.ef == 0 || F == 0 {
			continue
		}
		score := float64(c.ef) / math.Sqrt(F*float64(c.ef+c.ep))
		out = append(out, Suspect{File: l.file, Line: l.line, Score: score, Failing: c.ef, Passing: c.ep})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Passing != b.Passing {
			return a.Passing < b.Passing
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
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
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Timeout: r.Timeout, MaxOutput: 64 << 10, Outbox: outbox,
		Args: []string{"go", "test", "-c", "-cover", "-covermode=set", "-coverpkg=./...", "-o", bin, pkgDir}})
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
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: run, Timeout: r.Timeout, MaxOutput: 64 << 10, Outbox: outbox,
		Args: []string{bin, "-test.run", pattern, "-test.count", "1", "-test.coverprofile", prof}})
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
