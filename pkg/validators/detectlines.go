package validators

import (
	"fmt"
	"regexp"

	"github.com/redfix/redfix/pkg/unidiff"
)

// Python's and JavaScript's test detection is read from the lines a patch
// adds to a file that is not a test, as Go's one-line forms are
// (detecttests.go): a form that one line shows by its text, or an
// ingredient (a look at the stack, at the program's own identity, at its
// imports) and a partner (a test's or a runner's name) among the lines
// added to the same file, as Go's rule pairs ingredients within a
// declaration.

// lineDetection is one way to detect the tests, and how the evidence says it.
type lineDetection struct {
	re *regexp.Regexp
	// partner, when set, must be on an added line of the same file too
	// (the same line or another).
	partner *regexp.Regexp
	how     string
	// exempt, when set, names the files where the form is ordinary.
	exempt func(path string) bool
}

// detectInLines names the detections among the lines added to the file
// p, skipping comments: the one-line forms first, each line reported once
// and then left out of the pairs; then each pair found among the other
// lines, at the first of its lines.
func detectInLines(p string, changes []unidiff.Line, comment func(string) bool, rules []lineDetection) []string {
	var bad []string
	report := func(l unidiff.Line, how string) {
		bad = append(bad, fmt.Sprintf("%s:%d: detects that it runs under test %s: %s", p, l.NewLine, how, norm(l.Text)))
	}
	var lines []unidiff.Line
	for _, l := range changes {
		t := norm(l.Text)
		if !l.Added() || comment(t) {
			continue
		}
		if r, ok := oneLine(p, t, rules); ok {
			report(l, r.how)
			continue
		}
		lines = append(lines, l)
	}
	for _, r := range rules {
		if r.partner == nil || r.exempt != nil && r.exempt(p) {
			continue
		}
		ingredient, partner := firstMatch(lines, r.re), firstMatch(lines, r.partner)
		if ingredient == nil || partner == nil {
			continue
		}
		if partner.NewLine < ingredient.NewLine {
			ingredient = partner
		}
		report(*ingredient, r.how)
	}
	return bad
}

// oneLine is the first one-line form the line t of file p shows.
func oneLine(p, t string, rules []lineDetection) (lineDetection, bool) {
	for _, r := range rules {
		if r.partner == nil && r.re.MatchString(t) && (r.exempt == nil || !r.exempt(p)) {
			return r, true
		}
	}
	return lineDetection{}, false
}

// firstMatch is the first of lines that re matches, or nil.
func firstMatch(lines []unidiff.Line, re *regexp.Regexp) *unidiff.Line {
	for i := range lines {
		if re.MatchString(norm(lines[i].Text)) {
			return &lines[i]
		}
	}
	return nil
}
