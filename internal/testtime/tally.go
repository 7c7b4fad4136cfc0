package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (test2json's TestEvent, with the
// build events go test adds).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64 // seconds, on pass, fail and skip
	Output  string
}

// Timing is a test's or a package's time and result.
type Timing struct {
	Package string
	Test    string // "" for the package
	Elapsed time.Duration
	Action  string // pass, fail or skip
	// Began and Ended are when a package's tests started and ended
	// (zero for a test).
	Began, Ended time.Time
}

// Tally is what a run took: every top-level test's time and every
// package's.
type Tally struct {
	Tests    []Timing
	Packages []Timing
	// Failed: a package failed, or did not build.
	Failed bool

	started  map[key]bool          // the tests that ran
	began    map[string]time.Time  // when each package's tests started
	children map[key]time.Duration // a test's ended subtests' times, added up
}

// key names a test of a package.
type key struct{ pkg, test string }

// Read reads go test's events from r, echoes to out what go test prints
// without -json, and returns the times it read. A line that is not an
// event is echoed as it is.
func Read(r io.Reader, out io.Writer) (*Tally, error) {
	var tl Tally
	// A test's output is held until it ends: shown if it failed, dropped
	// otherwise, as go test does without -v.
	held := map[key][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		k := key{e.Package, e.Test}
		switch {
		case e.Action == "build-output":
			io.WriteString(out, e.Output)
		case e.Action == "build-fail":
			tl.Failed = true
		case e.Action == "output" && e.Test == "":
			// go test without -v says PASS only by its "ok" line.
			if e.Output != "PASS\n" {
				io.WriteString(out, e.Output)
			}
		case e.Action == "start" && e.Test == "":
			if tl.began == nil {
				tl.began = map[string]time.Time{}
			}
			tl.began[e.Package] = e.Time
		case e.Action == "run":
			if tl.started == nil {
				tl.started = map[key]bool{}
			}
			tl.started[k] = true
		case e.Action == "output":
			held[k] = append(held[k], e.Output)
		case e.Test == "" && isEnd(e.Action):
			// A package that failed may have tests that never ended (a
			// panic, a timeout): their output is what explains it.
			if e.Action == "fail" {
				tl.Failed = true
				flushPackage(out, held, e.Package)
			}
			p := timing(e)
			p.Began, p.Ended = tl.began[e.Package], e.Time
			tl.Packages = append(tl.Packages, p)
		case isEnd(e.Action):
			if e.Action == "fail" {
				io.WriteString(out, strings.Join(held[k], ""))
			}
			delete(held, k)
			tl.add(timing(e))
		}
	}
	return &tl, sc.Err()
}

// add records a test's time. A subtest's time is already its parent's,
// unless they ran in parallel after the parent's function returned: then
// the parent's own time is about nothing, and it is counted as its
// subtests' added up.
func (tl *Tally) add(tm Timing) {
	k := key{tm.Package, tm.Test}
	tm.Elapsed = max(tm.Elapsed, tl.children[k])
	delete(tl.children, k)
	parent, ok := tl.parent(k)
	if !ok {
		tl.Tests = append(tl.Tests, tm)
		return
	}
	if tl.children == nil {
		tl.children = map[key]time.Duration{}
	}
	tl.children[parent] += tm.Elapsed
}

// parent is the test that ran k: the longest of the tests that started
// whose name and a slash begin k's (a subtest's own name may hold a
// slash).
func (tl *Tally) parent(k key) (key, bool) {
	for i := strings.LastIndex(k.test, "/"); i > 0; i = strings.LastIndex(k.test[:i], "/") {
		if p := (key{k.pkg, k.test[:i]}); tl.started[p] {
			return p, true
		}
	}
	return key{}, false
}

func isEnd(action string) bool { return action == "pass" || action == "fail" || action == "skip" }

func timing(e event) Timing {
	return Timing{Package: e.Package, Test: e.Test, Action: e.Action, Elapsed: time.Duration(e.Elapsed * float64(time.Second))}
}

// flushPackage writes and drops the held output of pkg's tests, in the
// order of their names.
func flushPackage(out io.Writer, held map[key][]string, pkg string) {
	var keys []key
	for k := range held {
		if k.pkg == pkg {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].test < keys[j].test })
	for _, k := range keys {
		io.WriteString(out, strings.Join(held[k], ""))
		delete(held, k)
	}
}

// Slowest is the n longest of ts, longest first.
func Slowest(ts []Timing, n int) []Timing {
	s := append([]Timing(nil), ts...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Elapsed > s[j].Elapsed })
	if len(s) > n {
		s = s[:n]
	}
	return s
}

// Print writes the n slowest tests and packages.
func (tl *Tally) Print(w io.Writer, n int) {
	if n <= 0 || len(tl.Packages) == 0 {
		return
	}
	var total time.Duration
	for _, p := range tl.Packages {
		total += p.Elapsed
	}
	fmt.Fprintf(w, "\nThe %d slowest tests (of %d):\n", min(n, len(tl.Tests)), len(tl.Tests))
	for _, t := range Slowest(tl.Tests, n) {
		fmt.Fprintf(w, "%8.1fs  %-4s  %s %s\n", t.Elapsed.Seconds(), t.Action, t.Package, t.Test)
	}
	fmt.Fprintf(w, "The %d slowest packages (of %d; %.0fs summed):\n", min(n, len(tl.Packages)), len(tl.Packages), total.Seconds())
	for _, p := range Slowest(tl.Packages, n) {
		fmt.Fprintf(w, "%8.1fs  %-4s  %s\n", p.Elapsed.Seconds(), p.Action, p.Package)
	}
	tl.printLast(w, min(n, 5))
}

// printLast writes the n packages that ended last, with when each began
// and ended, in seconds from the first package's start: the run's tail,
// where a long package alone keeps the other cores idle.
func (tl *Tally) printLast(w io.Writer, n int) {
	var timed []Timing
	var first time.Time
	for _, p := range tl.Packages {
		if p.Began.IsZero() || p.Ended.IsZero() {
			continue
		}
		timed = append(timed, p)
		if first.IsZero() || p.Began.Before(first) {
			first = p.Began
		}
	}
	if len(timed) == 0 {
		return
	}
	sort.SliceStable(timed, func(i, j int) bool { return timed[i].Ended.After(timed[j].Ended) })
	timed = timed[:min(n, len(timed))]
	fmt.Fprintf(w, "The %d packages that ended last (seconds from the first start: began, ended):\n", len(timed))
	for _, p := range timed {
		fmt.Fprintf(w, "%8.0f %6.0f  %s\n", p.Began.Sub(first).Seconds(), p.Ended.Sub(first).Seconds(), p.Package)
	}
}
