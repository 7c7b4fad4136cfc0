package offline

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
)

// Reading: which code to read before repairing, and what the reads tell. The
// blame commit's files come first, then the stack's, the lines spectrum
// localization ranks, the failing test and what it calls.

// tryRead makes an action unless it was attempted before.
type tryRead func(name, thought string, args any) (harness.Action, bool)

// nextRead is the next read that localization wants, if the budget allows.
func (s *state) nextRead(left int) (harness.Action, bool) {
	if left < 8 { // keep room for at least one candidate
		return harness.Action{}, false
	}
	var try tryRead = func(name, thought string, args any) (harness.Action, bool) {
		a := harness.NewAction(name, thought, args)
		if s.attempted[key(a)] {
			return harness.Action{}, false
		}
		return s.act(intentNone, name, thought, args), true
	}
	reads := 0
	for p := range s.models {
		if s.p.langs.isSource(p) {
			reads++
		}
	}
	// 1. The source files the blame commit changed; 2. its hunks a
	// whole-file read did not show; 3. the files the stack traces name;
	// 3b. the lines spectrum-based localization ranked highest.
	blameFiles := s.blameFiles()
	if a, ok := s.readBlameFiles(try, blameFiles); ok {
		return a, true
	}
	if a, ok := s.readBlameHunks(try); ok {
		return a, true
	}
	if a, ok := s.readFrames(try, reads); ok {
		return a, true
	}
	if a, ok := s.readSuspects(try); ok {
		return a, true
	}
	// 4. The failing test itself, to learn what it calls. Worth its steps
	//    when the blame commit says little, or the budget is roomy.
	blameLines := len(blameFiles) > 0
	if !s.testRead && (!blameLines || left >= 24) {
		if a, ok := s.readTest(try); ok {
			return a, true
		}
	}
	// 5. Without a blame commit to go on, read the functions the test calls.
	if !blameLines && s.testRead {
		return s.readCalled(try, reads)
	}
	return harness.Action{}, false
}

// changedFile is a source file the blame commit changed, with the number
// of lines it added and removed there.
type changedFile struct {
	path string
	n    int
}

// blameFiles are the source files the blame commit changed: a file whose
// changes are in a function the failure names comes before any other,
// however small its change (the failure says where to look, the size of a
// change does not), then the most changed.
func (s *state) blameFiles() []changedFile {
	var files []changedFile
	for _, d := range s.diffs {
		if !s.p.langs.isSource(d.NewPath) {
			continue
		}
		n := 0
		for _, h := range d.Hunks {
			a, r := h.Changed()
			n += a + r
		}
		files = append(files, changedFile{d.NewPath, n})
	}
	named := s.messageNames()
	sort.SliceStable(files, func(i, j int) bool {
		if a, b := s.namesIn(files[i].path, named), s.namesIn(files[j].path, named); a != b {
			return a
		}
		return files[i].n > files[j].n
	})
	return files
}

// readBlameFiles reads the first of the blame commit's files not read yet.
func (s *state) readBlameFiles(try tryRead, files []changedFile) (harness.Action, bool) {
	for i, f := range files {
		if i >= s.p.maxFiles {
			break
		}
		if s.models[f.path] == nil {
			if a, ok := try(tools.ReadFile, fmt.Sprintf(
				"The blame commit changed %s (%d lines). Read it whole to see the changed lines in context.", f.path, f.n),
				tools.ReadFileArgs{Path: f.path}); ok {
				return a, true
			}
		}
	}
	return harness.Action{}, false
}

// readBlameHunks goes to a blame hunk the whole-file read did not show (a
// long file's listing is cut).
func (s *state) readBlameHunks(try tryRead) (harness.Action, bool) {
	for _, d := range s.diffs {
		m := s.models[d.NewPath]
		if m == nil || !s.p.langs.isSource(d.NewPath) || m.complete() {
			continue
		}
		for _, h := range d.Hunks {
			if _, ok := locateHunk(m, h); !ok {
				if a, ok := try(tools.GoToLine, fmt.Sprintf(
					"The listing of %s did not show the blame hunk at line %d. Read it there.", d.NewPath, h.NewStart),
					tools.GoToLineArgs{Path: d.NewPath, Line: h.NewStart}); ok {
					return a, true
				}
			}
		}
	}
	return harness.Action{}, false
}

// readFrames finds, reads or goes to the source lines the stack traces
// name; reads counts the source files read so far.
func (s *state) readFrames(try tryRead, reads int) (harness.Action, bool) {
	for _, fr := range s.frameRefs() {
		if !s.p.langs.isSource(fr.path) {
			continue
		}
		p, ok := s.resolve(fr.path)
		switch m := s.models[p]; {
		case !ok && reads < s.p.maxFiles:
			if a, ok := try(tools.FindFile, fmt.Sprintf(
				"The stack trace names %s:%d. Find that file in the repository.", fr.path, fr.line),
				tools.FindFileArgs{Pattern: path.Base(fr.path)}); ok {
				return a, true
			}
		case !ok:
		case m == nil && reads < s.p.maxFiles:
			if a, ok := try(tools.ReadFile, fmt.Sprintf(
				"The stack trace goes through %s line %d. Read that file.", p, fr.line), tools.ReadFileArgs{Path: p}); ok {
				return a, true
			}
		case m == nil:
		default:
			if _, ok := m.line(fr.line); ok {
				continue
			}
			if a, ok := try(tools.GoToLine, fmt.Sprintf(
				"Look at %s around line %d, where the stack trace points.", p, fr.line),
				tools.GoToLineArgs{Path: p, Line: fr.line}); ok {
				return a, true
			}
		}
	}
	return harness.Action{}, false
}

// readCalled finds where the functions the failing test calls are
// defined (three at the most), then reads their files.
func (s *state) readCalled(try tryRead, reads int) (harness.Action, bool) {
	names := make([]string, 0, len(s.called))
	for n := range s.called {
		names = append(names, n)
	}
	sort.Strings(names)
	asked := 0
	for _, n := range names {
		if s.defined(n) {
			continue
		}
		if asked >= 3 {
			break
		}
		asked++
		if a, ok := try(tools.SearchMethod, fmt.Sprintf(
			"The failing test calls %s. Find where it is defined.", n), tools.SearchMethodArgs{Name: n}); ok {
			return a, true
		}
	}
	for _, n := range names {
		for _, l := range s.methods[n] {
			if !s.p.langs.isSource(l.path) || s.models[l.path] != nil || reads >= s.p.maxFiles {
				continue
			}
			if a, ok := try(tools.ReadFile, fmt.Sprintf(
				"%s is defined in %s. Read that file.", n, l.path), tools.ReadFileArgs{Path: l.path}); ok {
				return a, true
			}
		}
	}
	return harness.Action{}, false
}

// readTest reads the failing test's code and records the names it calls.
func (s *state) readTest(try func(string, string, any) (harness.Action, bool)) (harness.Action, bool) {
	if len(s.failures) == 0 {
		s.testRead = true
		return harness.Action{}, false
	}
	if d := s.p.langs.byFile(s.failures[0].Package); d != nil {
		return s.readFileTest(d, try)
	}
	fn := testFunc(s.failures[0].Test)
	// Where is it? A frame in a file of tests, or search for the function.
	var at *location
	for _, fr := range s.frameRefs() {
		if s.p.langs.isTestPath(fr.path) {
			if p, ok := s.resolve(fr.path); ok {
				at = &location{p, fr.line}
				break
			}
			if a, ok := try(tools.FindFile, fmt.Sprintf(
				"The failing test's assertion is at %s:%d. Find that file.", fr.path, fr.line),
				tools.FindFileArgs{Pattern: path.Base(fr.path)}); ok {
				return a, true
			}
		}
	}
	if at == nil {
		for _, l := range s.methods[fn] {
			if s.p.langs.isTestPath(l.path) {
				at = &l
				break
			}
		}
	}
	if at == nil {
		if a, ok := try(tools.SearchMethod, fmt.Sprintf(
			"Find the failing test %s to see what it calls.", fn), tools.SearchMethodArgs{Name: fn}); ok {
			return a, true
		}
		s.testRead = true
		return harness.Action{}, false
	}
	if m := s.models[at.path]; m != nil {
		if _, ok := m.line(at.line); ok {
			s.testRead = true
			s.collectCalls(m, at.line)
			return harness.Action{}, false
		}
	}
	if s.models[at.path] == nil {
		if a, ok := try(tools.ReadFile, fmt.Sprintf(
			"Read %s, where the failing test %s is (line %d), to see which functions it exercises and which tests sit next to it.", at.path, fn, at.line),
			tools.ReadFileArgs{Path: at.path}); ok {
			return a, true
		}
	}
	if a, ok := try(tools.GoToLine, fmt.Sprintf(
		"Read the failing test %s around line %d to see which functions it exercises.", fn, at.line),
		tools.GoToLineArgs{Path: at.path, Line: at.line}); ok {
		return a, true
	}
	s.testRead = true
	if m := s.models[at.path]; m != nil {
		s.collectCalls(m, at.line)
	}
	return harness.Action{}, false
}

var callRE = regexp.MustCompile(`\b([A-Za-z_]\w*)\s*\(`)

var notCalls = map[string]bool{
	"if": true, "for": true, "func": true, "return": true, "switch": true, "make": true, "len": true,
	"append": true, "new": true, "cap": true, "panic": true, "copy": true, "delete": true, "string": true,
	"int": true, "int64": true, "float64": true, "byte": true, "rune": true, "error": true, "bool": true,
	"Errorf": true, "Fatalf": true, "Fatal": true, "Error": true, "Logf": true, "Log": true, "Run": true,
	"Helper": true, "Parallel": true, "Skip": true, "Skipf": true, "Cleanup": true, "TempDir": true,
	"Sprintf": true, "Sprint": true, "Println": true, "Printf": true, "DeepEqual": true, "Equal": true,
	"range": true, "go": true, "defer": true, "recover": true, "min": true, "max": true, "Name": true,
}

// collectCalls records the names of the functions called by the test
// function around line n.
func (s *state) collectCalls(m *fileModel, n int) {
	start, end, _, ok := m.funcSpan(n)
	if !ok {
		start, end = n-25, n+25
	}
	for i := start; i <= end; i++ {
		t, ok := m.line(i)
		if !ok {
			continue
		}
		if d := m.d; d != nil && d.DefLine != nil && d.DefLine(t, i == start) {
			continue
		}
		for _, c := range callRE.FindAllStringSubmatch(t, -1) {
			if d := m.d; d != nil && d.NotCall != nil && d.NotCall(c[1]) {
				continue
			}
			if !notCalls[c[1]] && !strings.HasPrefix(c[1], "Test") {
				s.called[c[1]] = true
			}
		}
	}
}

func (s *state) defined(name string) bool {
	for p, m := range s.models {
		if s.p.langs.isSource(p) {
			if _, ok := m.funcs()[name]; ok {
				return true
			}
		}
	}
	return false
}

// frameRefs are the failures' frames as locations, in order: "file:line"
// or "file:line:column"; a failure without frames, in a language that
// reads a failure's stack (Dialect.Stack), gives those of its output.
func (s *state) frameRefs() []location {
	var out []location
	seen := map[location]bool{}
	for _, f := range s.failures {
		var locs []location
		for _, fr := range f.Frames {
			if l, ok := parseFrame(fr); ok {
				locs = append(locs, l)
			}
		}
		if d := s.p.langs.stack(f.Package); len(f.Frames) == 0 && d != nil {
			locs = stackLocations(d, f.Output)
		}
		for _, l := range locs {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	return out
}

// parseFrame reads "file:line" or "file:line:column" (a file:// URL's
// scheme dropped).
func parseFrame(fr string) (location, bool) {
	fr = strings.TrimPrefix(fr, "file://")
	i := strings.LastIndexByte(fr, ':')
	if i < 0 {
		return location{}, false
	}
	if j := strings.LastIndexByte(fr[:i], ':'); j >= 0 {
		if _, err := strconv.Atoi(fr[j+1 : i]); err == nil {
			if _, err := strconv.Atoi(fr[i+1:]); err == nil {
				i = j // file:line:column
			}
		}
	}
	n, err := strconv.Atoi(strings.SplitN(fr[i+1:], ":", 2)[0])
	if err != nil {
		return location{}, false
	}
	return location{path: fr[:i], line: n}, true
}

// resolve maps a frame's path (absolute, package-relative or a bare name)
// to a path in the repository that an observation has named.
func (s *state) resolve(p string) (string, bool) {
	var known []string
	seen := map[string]bool{}
	addKnown := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			known = append(known, k)
		}
	}
	for k := range s.models {
		addKnown(k)
	}
	for _, d := range s.diffs {
		addKnown(d.NewPath)
	}
	for _, ps := range s.found {
		for _, k := range ps {
			addKnown(k)
		}
	}
	sort.Strings(known)
	var matches []string
	for _, k := range known {
		if k == p || strings.HasSuffix(p, "/"+k) || strings.HasSuffix(k, "/"+p) {
			matches = append(matches, k)
		}
	}
	if len(matches) == 0 {
		return "", false
	}
	if len(matches) > 1 && len(s.failures) > 0 {
		// Prefer the file in the failing test's package.
		pkg := s.failures[0].Package
		for _, k := range matches {
			if d := path.Dir(k); d != "." && strings.HasSuffix(pkg, "/"+d) {
				return k, true
			}
		}
	}
	return matches[0], true
}

// namesIn reports whether the blame commit's hunks in the file at p are in,
// or next to, a function of names: a hunk's section header or one of its
// lines declares it.
func (s *state) namesIn(p string, names map[string]bool) bool {
	ld := s.p.langs.of(p)
	for _, d := range s.diffs {
		if d.NewPath != p {
			continue
		}
		for _, h := range d.Hunks {
			texts := []string{h.Section}
			for _, l := range h.Lines {
				texts = append(texts, l.Text)
			}
			for _, t := range texts {
				if n := declaredFunc(ld, t); n != "" && names[n] {
					return true
				}
			}
		}
	}
	return false
}
