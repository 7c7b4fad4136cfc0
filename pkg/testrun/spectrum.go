package testrun

import (
	"iter"
	"math"
	"sort"
)

// Suspect is a source line ranked by spectrum-based fault localization.
type Suspect struct {
	File  string  // relative to the checkout's root
	Line  int     // 1-based
	Score float64 // Ochiai: 1 when every failing test and no passing test runs it
	// Failing and Passing count the tests that ran the line.
	Failing, Passing int
}

// Spectra is what a driver's Localize found: the lines the failing tests
// point at, and the tests it measured.
type Spectra struct {
	Suspects []Suspect // most suspicious first
	Failing  []string  // the failing tests measured
	Passing  []string  // the passing tests measured
}

// Spectrum counts, line by line, the failing and the passing tests that ran
// it, and ranks the lines by Ochiai: every driver measures its tests'
// coverage its own way and ranks the lines with it.
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
