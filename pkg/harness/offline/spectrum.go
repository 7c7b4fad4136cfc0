package offline

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/testrun"
)

// Localization beyond the blame commit and the stack: the lines the failing
// tests run and the passing ones do not (spectrum-based fault localization,
// from run_tests with localize), and the functions the failure's message
// names.

// Scores of these signals.
const (
	scoreSpectrum    = 7 // times the line's Ochiai score
	scoreMessageFunc = 4 // the line is in a function the failure names
	scoreGotValue    = 3 // the line holds the wrong value the failure reports
	minSpectrum      = 0.3
	spectrumFiles    = 3 // files of suspects read before repairing
)

// wantsLocalize says whether to ask for spectrum-based localization: once,
// when the blame commit gives no source line to go on.
func (s *state) wantsLocalize(left int) bool {
	if s.localized || left < 12 {
		return false
	}
	for _, d := range s.diffs {
		if s.p.langs.isSource(d.NewPath) {
			return false
		}
	}
	return true
}

func (s *state) localize() harness.Action {
	return s.act(intentLocalize, tools.RunTests,
		"No blame commit points at the code. Rank the lines by how they relate to the failing tests: the lines they run and the passing tests next to them do not (spectrum-based fault localization over their coverage).",
		tools.RunTestsArgs{Localize: true})
}

func (s *state) afterLocalize(obs tools.Observation) {
	s.localized = true
	if obs.Tests != nil {
		s.suspects = obs.Tests.Suspects
	}
}

// topSuspects are the suspects worth reading and scoring: source lines
// scoring at least minSpectrum, best first.
func (s *state) topSuspects() []testrun.Suspect {
	var out []testrun.Suspect
	for _, sus := range s.suspects {
		if sus.Score >= minSpectrum && s.p.langs.isSource(sus.File) {
			out = append(out, sus)
		}
	}
	return out
}

// readSuspects reads the files of the top suspects, and goes to the lines
// a partial listing did not show.
func (s *state) readSuspects(try func(string, string, any) (harness.Action, bool)) (harness.Action, bool) {
	files := 0
	seen := map[string]bool{}
	for _, sus := range s.topSuspects() {
		if seen[sus.File] {
			continue
		}
		seen[sus.File] = true
		files++
		if files > spectrumFiles {
			break
		}
		m := s.models[sus.File]
		if m == nil {
			if a, ok := try(tools.ReadFile, fmt.Sprintf(
				"Line %d of %s is among the most suspicious (score %.2f: run by %d failing and %d passing tests). Read that file.",
				sus.Line, sus.File, sus.Score, sus.Failing, sus.Passing), tools.ReadFileArgs{Path: sus.File}); ok {
				return a, true
			}
			continue
		}
		if _, ok := m.line(sus.Line); !ok {
			if a, ok := try(tools.GoToLine, fmt.Sprintf(
				"The listing of %s did not show line %d, a suspicious line. Read it there.", sus.File, sus.Line),
				tools.GoToLineArgs{Path: sus.File, Line: sus.Line}); ok {
				return a, true
			}
		}
	}
	return harness.Action{}, false
}

// spectrum maps the suspects' lines to their scores.
func (s *state) spectrum() map[location]float64 {
	m := map[location]float64{}
	for _, sus := range s.topSuspects() {
		m[location{sus.File, sus.Line}] = sus.Score
	}
	return m
}

var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// messageNames are the identifiers the failures name, at least three
// characters long: in their messages ("Total", "Gross" in "Gross(1000) =
// 5, want 6"), in their tests' names (Within of TestWithin), and the
// functions a failure's stack names where its language reads one.
func (s *state) messageNames() map[string]bool {
	names := map[string]bool{}
	for _, f := range s.failures {
		if d := s.p.langs.stack(f.Package); d != nil {
			// What a test calls shows in its stack where the language
			// reads one, not in its message ("expected 950 to be 1000").
			fns, _ := d.Stack(f.Output)
			for _, n := range fns {
				names[n] = true
			}
		}
		for _, w := range identRE.FindAllString(f.Message, -1) {
			if len(w) >= 3 {
				names[w] = true
			}
		}
		if n := testedName(f.Test); len(n) >= 3 {
			names[n] = true
		}
	}
	return names
}

// testedName is the function a test's name names: "TestWithin" and
// "TestWithin/upper_bound" test Within, "TestParse_Empty" Parse,
// "test_parse_date" parse_date; "" when the name says nothing.
func testedName(test string) string {
	n := testFunc(test)
	switch {
	case strings.HasPrefix(n, "Test"):
		n = strings.TrimPrefix(n, "Test")
		n, _, _ = strings.Cut(n, "_")
	case strings.HasPrefix(n, "test_"):
		n = strings.TrimPrefix(n, "test_")
	default:
		return ""
	}
	if !identRE.MatchString(n) || identRE.FindString(n) != n {
		return ""
	}
	return n
}

// scoreSpectrumAndMessage adds the spectrum and message signals to the
// suspicion of lines.
func scoreSpectrumAndMessage(ev evidence, get func(location) *suspicion) {
	locs := make([]location, 0, len(ev.spectrum))
	for l := range ev.spectrum {
		locs = append(locs, l)
	}
	sort.Slice(locs, func(i, j int) bool { return ev.spectrum[locs[i]] > ev.spectrum[locs[j]] })
	for _, l := range locs {
		f := ev.models[l.path]
		if f == nil {
			continue
		}
		if _, ok := f.line(l.line); ok {
			sc := ev.spectrum[l]
			get(l).add(scoreSpectrum*sc, fmt.Sprintf("the failing tests run this line, the passing ones less (spectrum score %.2f)", sc))
		}
	}
	markFuncs(ev.models, ev.named, get, scoreMessageFunc, "which the failure message names")
	scoreGotValues(ev, get)
}

// gotRE finds the value a failure reports getting: "F(x) = false, want
// true", "got 5, want 6", "Total = -300".
var gotRE = regexp.MustCompile(`(?:[\w)\]]\s*=|\bgot:?)\s*("[^"]*"|-?[\w.]+)`)

// gotValues are the values the failures' messages report getting.
func (s *state) gotValues() []string {
	var out []string
	for _, f := range s.failures {
		if d := s.p.langs.of(f.Package); d != nil && d.Got != nil {
			out = append(out, d.Got(f.Message)...)
			continue
		}
		for _, m := range gotRE.FindAllStringSubmatch(f.Message, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// scoreGotValues adds to the suspicious lines (those the spectrum ranks, or
// in a function the test calls or the message names) that hold, as a
// literal, the wrong value the failure reports: `return false` when the
// message says "= false, want true".
func scoreGotValues(ev evidence, get func(location) *suspicion) {
	if len(ev.got) == 0 {
		return
	}
	var res []*regexp.Regexp
	for _, v := range ev.got {
		pat := regexp.QuoteMeta(v)
		if !strings.HasPrefix(v, `"`) {
			pat = `(^|[^\w.])` + pat + `($|[^\w.])`
		}
		res = append(res, regexp.MustCompile(pat))
	}
	inFunc := map[string]bool{}
	for n := range ev.called {
		inFunc[n] = true
	}
	for n := range ev.named {
		inFunc[n] = true
	}
	for p, f := range ev.models {
		if !f.source() {
			continue
		}
		candidate := map[int]bool{}
		for l := range ev.spectrum {
			if l.path == p {
				candidate[l.line] = true
			}
		}
		for name, span := range f.funcs() {
			if inFunc[name] {
				for m := span[0]; m <= span[1]; m++ {
					candidate[m] = true
				}
			}
		}
		for n := range candidate {
			text, ok := f.line(n)
			if !ok || strings.HasPrefix(strings.TrimSpace(text), "//") {
				continue
			}
			for i, re := range res {
				if re.MatchString(text) {
					get(location{p, n}).add(scoreGotValue, "it holds "+ev.got[i]+", the value the failure reports getting")
					break
				}
			}
		}
	}
}
