package gaterules

import (
	"fmt"
	"regexp"

	"github.com/redfix/redfix/pkg/unidiff"
)

// Test detection read from the lines a patch adds to a file that is not a
// test: a form that one line shows by its text, or an ingredient (a look
// at the stack, at the program's own identity, at its imports) and a
// partner (a test's or a runner's name) among the lines added to the same
// file.

// Detection is one way to detect the tests, and how the evidence says it.
type Detection struct {
	RE *regexp.Regexp
	// Partner, when set, must be on an added line of the same file too
	// (the same line or another).
	Partner *regexp.Regexp
	How     string
	// Exempt, when set, names the files where the form is ordinary.
	Exempt func(path string) bool
}

// DetectInLines names the detections among the lines added to the file
// p, skipping comments: the one-line forms first, each line reported once
// and then left out of the pairs; then each pair found among the other
// lines, at the first of its lines.
func DetectInLines(p string, changes []unidiff.Line, comment func(string) bool, rules []Detection) []string {
	var bad []string
	report := func(l unidiff.Line, how string) {
		bad = append(bad, Detected(p, l.NewLine, how, Norm(l.Text)))
	}
	var lines []unidiff.Line
	for _, l := range changes {
		t := Norm(l.Text)
		if !l.Added() || comment(t) {
			continue
		}
		if r, ok := OneLineForm(p, t, rules); ok {
			report(l, r.How)
			continue
		}
		lines = append(lines, l)
	}
	for _, r := range rules {
		if r.Partner == nil || r.Exempt != nil && r.Exempt(p) {
			continue
		}
		ingredient, partner := firstMatch(lines, r.RE), firstMatch(lines, r.Partner)
		if ingredient == nil || partner == nil {
			continue
		}
		if partner.NewLine < ingredient.NewLine {
			ingredient = partner
		}
		report(*ingredient, r.How)
	}
	return bad
}

// Detected is the evidence of a detection at line of p.
func Detected(p string, line int, how, text string) string {
	return fmt.Sprintf("%s:%d: detects that it runs under test %s: %s", p, line, how, text)
}

// OneLineForm is the first one-line form (a rule without a partner) the
// line t of file p shows.
func OneLineForm(p, t string, rules []Detection) (Detection, bool) {
	for _, r := range rules {
		if r.Partner == nil && r.RE.MatchString(t) && (r.Exempt == nil || !r.Exempt(p)) {
			return r, true
		}
	}
	return Detection{}, false
}

// firstMatch is the first of lines that re matches, or nil.
func firstMatch(lines []unidiff.Line, re *regexp.Regexp) *unidiff.Line {
	for i := range lines {
		if re.MatchString(Norm(lines[i].Text)) {
			return &lines[i]
		}
	}
	return nil
}
