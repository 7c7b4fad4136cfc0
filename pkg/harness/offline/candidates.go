package offline

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/unidiff"
)

// change replaces lines [start, end] (1-based, inclusive; end = start-1 for
// an insertion before start) with repl.
type change struct {
	start, end int
	repl       []string
}

// Candidate is one hypothesis: an edit of one file.
type Candidate struct {
	Path     string
	Line     int    // the first line it touches
	Old, New string // the line before and after, for single-line templates
	Template string
	What     string
	Score    float64
	Why      []string // the evidence that put this line under suspicion
	changes  []change
}

// Describe is a one-line account of the candidate for people.
func (c *Candidate) Describe() string {
	if c.Old != "" || c.New != "" {
		return fmt.Sprintf("%s:%d %s (`%s` → `%s`)", c.Path, c.Line, c.What, strings.TrimSpace(c.Old), strings.TrimSpace(c.New))
	}
	return fmt.Sprintf("%s:%d %s", c.Path, c.Line, c.What)
}

// location is a suspicious line of a file.
type location struct {
	path string
	line int
}

// evidence is what localization knows: the files' text, the blame diff, the
// failure's frames in source files, and the functions the failing test calls.
type evidence struct {
	models map[string]*fileModel
	diffs  []unidiff.File
	frames []location
	called map[string]bool
	// spectrum scores lines by spectrum-based localization (0..1).
	spectrum map[location]float64
	// named are identifiers the failures' messages name.
	named map[string]bool
	// got are the values the failures report getting.
	got []string
}

// suspicion is a line's score and the reasons for it.
type suspicion struct {
	score float64
	why   []string
}

func (s *suspicion) add(score float64, why string) {
	for _, w := range s.why {
		if w == why {
			return
		}
	}
	s.score += score
	s.why = append(s.why, why)
}

// located is a blame hunk found in the current file.
type located struct {
	hunk       unidiff.Hunk
	start, end int      // the hunk's new side in the current file
	old        []string // what to put back
	added      []int    // current line numbers of the hunk's added lines
	near       []int    // lines next to removed ones
	// was maps an added line that took a removed one's place (the k-th
	// line added after a run of removed lines, the k-th removed) to the
	// line it replaced.
	was map[int]string
}

// locateHunk finds the hunk's new side in the file, dropping context lines
// (later commits may have changed them) until it matches; the match nearest
// the hunk's own line number wins.
func locateHunk(f *fileModel, h unidiff.Hunk) (located, bool) {
	lead, trail := 0, 0
	for _, l := range h.Lines {
		if l.Kind != ' ' {
			break
		}
		lead++
	}
	for i := len(h.Lines) - 1; i >= 0 && h.Lines[i].Kind == ' '; i-- {
		trail++
	}
	if lead == len(h.Lines) {
		return located{}, false // context only
	}
	for trim := 0; trim <= lead || trim <= trail; trim++ {
		lt, tt := min(trim, lead), min(trim, trail)
		body := h.Lines[lt : len(h.Lines)-tt]
		var newSide, oldSide []string
		for _, l := range body {
			if l.Kind != '-' {
				newSide = append(newSide, l.Text)
			}
			if l.Kind != '+' {
				oldSide = append(oldSide, l.Text)
			}
		}
		if len(newSide) == 0 {
			continue
		}
		at := find(f.lines, newSide)
		if len(at) == 0 {
			continue
		}
		want := h.NewStart + lt
		best := at[0]
		for _, a := range at[1:] {
			if abs(a-want) < abs(best-want) {
				best = a
			}
		}
		loc := located{hunk: h, start: best, end: best + len(newSide) - 1, old: oldSide, was: map[int]string{}}
		n := best
		var removed []string
		for _, l := range body {
			switch l.Kind {
			case '+':
				loc.added = append(loc.added, n)
				if len(removed) > 0 {
					loc.was[n], removed = removed[0], removed[1:]
				}
				n++
			case ' ':
				removed = nil
				n++
			case '-':
				loc.near = append(loc.near, n-1, n)
				removed = append(removed, l.Text)
			}
		}
		return loc, true
	}
	return located{}, false
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Scores of the localization signals.
const (
	scoreBlame      = 8 // the blame commit added or changed the line
	scoreFrame      = 6 // a stack frame of the failure names the line
	scoreFrameFunc  = 3 // the line is in a function a frame names
	scoreNearRemove = 3 // the blame commit removed lines next to it
	scoreBlameFunc  = 2 // the line is in a function the blame commit changed
	scoreCalled     = 2 // the line is in a function the failing test calls
	// scoreRestore: a one-token template puts back the line the blame
	// commit replaced, the smallest change that undoes what it did there.
	scoreRestore = 5
)

// rank scores the suspicious lines and turns them into candidates, most
// likely first.
func rank(ev evidence) []*Candidate {
	sus := map[location]*suspicion{}
	get := func(l location) *suspicion {
		s := sus[l]
		if s == nil {
			s = &suspicion{}
			sus[l] = s
		}
		return s
	}
	hunks, restores := scoreBlameHunks(ev, get)
	scoreFrames(ev, get)
	markFuncs(ev.models, ev.called, get, scoreCalled, "which the failing test calls")
	scoreSpectrumAndMessage(ev, get)

	cands := lineCandidates(ev, sus, restores)
	cands = append(cands, undoCandidates(sus, hunks)...)
	preferNarrow(ev.models, cands)
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Score > cands[j].Score })
	return normalized(ev, cands)
}

// blameHunk is one hunk of the blame commit, located in a file's model.
type blameHunk struct {
	path string
	loc  located
}

// scoreBlameHunks marks the lines the blame commit added, the functions
// it changed and the lines beside what it removed; it returns its hunks
// and, by location, the lines it replaced as they were before.
func scoreBlameHunks(ev evidence, get func(location) *suspicion) ([]blameHunk, map[location]string) {
	var hunks []blameHunk
	restores := map[location]string{}
	for _, d := range ev.diffs {
		f := ev.models[d.NewPath]
		if f == nil || !f.source() {
			continue
		}
		for _, h := range d.Hunks {
			loc, ok := locateHunk(f, h)
			if !ok {
				continue
			}
			hunks = append(hunks, blameHunk{d.NewPath, loc})
			for n, was := range loc.was {
				restores[location{d.NewPath, n}] = was
			}
			for _, n := range loc.added {
				get(location{d.NewPath, n}).add(scoreBlame, "the blame commit changed this line")
				markFunc(f, n, func(m int, name string) {
					get(location{d.NewPath, m}).add(scoreBlameFunc, "in "+name+", which the blame commit changed")
				})
			}
			for _, n := range loc.near {
				if _, ok := f.line(n); ok {
					get(location{d.NewPath, n}).add(scoreNearRemove, "next to lines the blame commit removed")
				}
			}
		}
	}
	return hunks, restores
}

// scoreFrames marks the lines the failure's stack trace points at and
// the functions that hold them.
func scoreFrames(ev evidence, get func(location) *suspicion) {
	for _, fr := range ev.frames {
		f := ev.models[fr.path]
		if f == nil {
			continue
		}
		if _, ok := f.line(fr.line); ok {
			get(fr).add(scoreFrame, "the failure's stack trace points here")
		}
		markFunc(f, fr.line, func(m int, name string) {
			get(location{fr.path, m}).add(scoreFrameFunc, "in "+name+", which the stack trace names")
		})
	}
}

// lineCandidates are the one-line mutations of every suspicious line of
// code, in the order of the lines, each scored by its line's suspicion
// and its template's prior; one that puts back the line the blame commit
// replaced scores more.
func lineCandidates(ev evidence, sus map[location]*suspicion, restores map[location]string) []*Candidate {
	locs := make([]location, 0, len(sus))
	for l := range sus {
		locs = append(locs, l)
	}
	sort.Slice(locs, func(i, j int) bool {
		if locs[i].path != locs[j].path {
			return locs[i].path < locs[j].path
		}
		return locs[i].line < locs[j].line
	})
	var cands []*Candidate
	for _, l := range locs {
		f := ev.models[l.path]
		if f == nil || !f.source() {
			continue
		}
		text, ok := f.line(l.line)
		if !ok || !f.code(l.line) {
			continue
		}
		s := sus[l]
		was, replaced := restores[l]
		for _, m := range mutations(f.d, text) {
			c := &Candidate{Path: l.path, Line: l.line, Old: text, New: m.New, Template: m.Template, What: m.What,
				Score: s.score + m.Prior, Why: s.why,
				changes: []change{{start: l.line, end: l.line, repl: []string{m.New}}}}
			if replaced && sameTokens(m.New, was) {
				c.Score += scoreRestore
				c.Why = append(append([]string(nil), s.why...), "it puts back the line as it was before the blame commit")
			}
			cands = append(cands, c)
		}
	}
	return cands
}

// undoCandidates undo each blame hunk (scored by the most suspicious line
// in it, beside the blame itself), then all of a file's hunks at once.
func undoCandidates(sus map[location]*suspicion, hunks []blameHunk) []*Candidate {
	var cands []*Candidate
	byFile := map[string][]located{}
	var files []string
	for _, h := range hunks {
		cands = append(cands, undoHunk(sus, h))
		if _, ok := byFile[h.path]; !ok {
			files = append(files, h.path)
		}
		byFile[h.path] = append(byFile[h.path], h.loc)
	}
	for _, p := range files {
		if c := undoFile(p, byFile[p]); c != nil {
			cands = append(cands, c)
		}
	}
	return cands
}

// undoHunk is the candidate that undoes one blame hunk.
func undoHunk(sus map[location]*suspicion, h blameHunk) *Candidate {
	bonus, why := 0.0, []string{"the blame commit made this change"}
	for n := h.loc.start; n <= h.loc.end; n++ {
		s := sus[location{h.path, n}]
		if s == nil {
			continue
		}
		b := s.score
		for _, n2 := range h.loc.added {
			if n2 == n {
				b -= scoreBlame
			}
		}
		if b > bonus {
			bonus = b
			why = append([]string{"the blame commit made this change"}, s.why...)
		}
	}
	added, removed := h.loc.hunk.Changed()
	prior := 3.0
	if added > 10 {
		prior = 2
	}
	return &Candidate{Path: h.path, Line: h.loc.start, Template: TplUndoHunk,
		What:  fmt.Sprintf("undo the blame commit's hunk @@ -%d +%d @@ (%d added, %d removed lines)", h.loc.hunk.OldStart, h.loc.hunk.NewStart, added, removed),
		Score: scoreBlame + prior + bonus, Why: dedupe(why),
		changes: []change{{start: h.loc.start, end: h.loc.end, repl: h.loc.old}}}
}

// undoFile is the candidate that undoes all the blame hunks of the file
// at p; nil for a file of one hunk, or of hunks that overlap.
func undoFile(p string, locs []located) *Candidate {
	if len(locs) < 2 {
		return nil
	}
	sort.Slice(locs, func(i, j int) bool { return locs[i].start < locs[j].start })
	var ch []change
	for i, l := range locs {
		if i > 0 && l.start <= locs[i-1].end {
			return nil
		}
		ch = append(ch, change{start: l.start, end: l.end, repl: l.old})
	}
	return &Candidate{Path: p, Line: locs[0].start, Template: TplUndoFile,
		What:  fmt.Sprintf("undo all %d hunks of the blame commit in %s", len(locs), path.Base(p)),
		Score: scoreBlame + 1, Why: []string{"the blame commit changed this file"}, changes: ch}
}

// normalized are the candidates, best first, in gofmt's layout: those
// that do not parse are dropped, and so is one that duplicates a better
// candidate (an undone hunk that is a one-token fix is told as that fix).
func normalized(ev evidence, cands []*Candidate) []*Candidate {
	var out []*Candidate
	seen := map[string]*Candidate{}
	for _, c := range cands {
		key, ok := normalize(ev.models[c.Path], c)
		if !ok {
			continue
		}
		if kept := seen[key]; kept != nil {
			if kept.Template == TplUndoHunk && c.Old != "" {
				// The same edit, told as the one-token fix it is.
				kept.Line, kept.Old, kept.New, kept.Template = c.Line, c.Old, c.New, c.Template
				kept.What = c.What + ", which also undoes the blame commit's change to this line"
			}
			continue
		}
		seen[key] = c
		out = append(out, c)
	}
	return out
}

// sameTokens reports whether two lines read the same but for spacing.
func sameTokens(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

func dedupe(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// markFuncs adds score to every line of the source functions named in
// names, saying "in NAME, " and why.
func markFuncs(models map[string]*fileModel, names map[string]bool, get func(location) *suspicion, score float64, why string) {
	for p, f := range models {
		if !f.source() {
			continue
		}
		for name, span := range f.funcs() {
			if !names[name] {
				continue
			}
			for m := span[0]; m <= span[1]; m++ {
				get(location{p, m}).add(score, "in "+name+", "+why)
			}
		}
	}
}

// markFunc calls fn for every line of the function holding line n.
func markFunc(f *fileModel, n int, fn func(line int, name string)) {
	s, e, name, ok := f.funcSpan(n)
	if !ok {
		return
	}
	for m := s; m <= e; m++ {
		fn(m, name)
	}
}

// applyChanges returns lines with the changes (sorted, disjoint) made.
func applyChanges(lines []string, changes []change) []string {
	out := append([]string(nil), lines...)
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		tail := append([]string(nil), out[c.end:]...)
		out = append(append(out[:c.start-1], c.repl...), tail...)
	}
	return out
}

// normalize rewrites a candidate as its language's formatter would lay it
// out (when it has one) and returns a
// key for the file it produces. ok is false when the result does not parse.
// Files the policy has not wholly seen are left as they are.
func normalize(f *fileModel, c *Candidate) (string, bool) {
	if f == nil {
		return "", false
	}
	if !f.complete() {
		return c.Path + "\x00" + fmt.Sprint(c.changes), true
	}
	orig := strings.Join(f.lines, "\n") + "\n"
	after := strings.Join(applyChanges(f.lines, c.changes), "\n") + "\n"
	if f.d == nil || f.d.Format == nil {
		return c.Path + "\x00" + after, true
	}
	formatted, err := f.d.Format([]byte(after))
	if err != nil {
		return "", false
	}
	if fo, err := f.d.Format([]byte(orig)); err != nil || string(fo) != orig {
		return c.Path + "\x00" + after, true // not formatted to begin with: keep ours
	}
	newLines := strings.Split(strings.TrimSuffix(string(formatted), "\n"), "\n")
	ch, ok := diffLines(f.lines, newLines)
	if !ok {
		return "", false // formatting alone: no change
	}
	c.changes = []change{ch}
	if len(c.changes[0].repl) == 1 && ch.start == ch.end && c.Template != TplUndoHunk && c.Template != TplUndoFile {
		c.New = ch.repl[0]
	}
	if c.Template == TplUndoFile {
		// Keep the hunks apart: one block each reads better.
		c.changes = splitChange(f.lines, newLines, ch)
	}
	return c.Path + "\x00" + string(formatted), true
}

// diffLines is the single change turning a into b: everything between their
// common prefix and suffix.
func diffLines(a, b []string) (change, bool) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	if p == len(a) && p == len(b) {
		return change{}, false
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return change{start: p + 1, end: len(a) - s, repl: append([]string(nil), b[p:len(b)-s]...)}, true
}

// splitChange breaks one change into its disjoint parts by matching the
// unchanged lines inside it (a simple LCS on lines).
func splitChange(a, b []string, ch change) []change {
	old := a[ch.start-1 : ch.end]
	neu := ch.repl
	n, m := len(old), len(neu)
	if n*m > 250000 {
		return []change{ch}
	}
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if old[i] == neu[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []change
	i, j := 0, 0
	var cur *change
	for i < n || j < m {
		if i < n && j < m && old[i] == neu[j] {
			if cur != nil {
				out = append(out, *cur)
				cur = nil
			}
			i++
			j++
			continue
		}
		if cur == nil {
			cur = &change{start: ch.start + i, end: ch.start + i - 1}
		}
		if j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]) {
			cur.repl = append(cur.repl, neu[j])
			j++
		} else {
			cur.end++
			i++
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}
