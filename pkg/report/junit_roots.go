package report

import (
	"regexp"
	"slices"
	"strings"

	"github.com/redfix/redfix/pkg/task"
)

var (
	// absPathRE is an absolute path in a message.
	absPathRE = regexp.MustCompile(`(?:^|[\s'"(])(?:file://)?(/[^\s'"()\[\]:,]+)`)
	// ansiRE is a terminal's colour code, its escape character there or
	// lost (a runner may write "[31m" into its JUnit's attributes).
	ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\[(?:\d{1,3};)*\d{1,3}m`)
)

// StripANSI removes terminal colour codes from s.
func StripANSI(s string) string {
	if !strings.Contains(s, "m") {
		return s
	}
	return ansiRE.ReplaceAllString(s, "")
}

// relativeToReport makes the absolute paths of res relative to the roots
// the report itself shows: a path that is absolute in one place and
// relative in another (jest's absolute stack frames of a file its file
// attribute names relative; mocha's absolute suite file whose frames are
// relative; vitest's messages naming the absolute path of a file it names
// relative) gives the root the relative paths are from. Packages, frames,
// messages, outputs and the test IDs lose the roots; a report that shows
// none is left as it is (triage learns the root from its reproduction).
// Only the files of a registered dialect (JUnitDialect.IsFile) show roots:
// other reports name theirs as their runners do.
func relativeToReport(res *Result) {
	relativeTo(res, func(p string) bool { return isDialectFile(dialects(), p) })
}

// relativeTo is relativeToReport where isFile tells the files that show
// roots.
func relativeTo(res *Result, isFile func(string) bool) {
	rel, abs := map[string]bool{}, map[string]bool{}
	add := func(p string) {
		switch {
		case !isFile(p):
		case strings.HasPrefix(p, "/"):
			abs[p] = true
		case p != "" && !strings.HasPrefix(p, "."):
			rel[p] = true
		}
	}
	all := [][]task.Failure{res.Failures, res.BuildErrors}
	for _, fs := range all {
		for _, f := range fs {
			for _, m := range absPathRE.FindAllStringSubmatch(f.Message, MaxTraceFrames) {
				add(m[1])
			}
			add(f.Package)
			for _, fr := range f.Frames {
				file, _ := cutLine(fr)
				add(file)
			}
		}
	}
	if len(rel) == 0 || len(abs) == 0 {
		return
	}
	rootSet := map[string]bool{}
	for a := range abs {
		for i := 1; i < len(a); i++ {
			if a[i] == '/' && rel[a[i+1:]] {
				rootSet[a[:i+1]] = true
				break
			}
		}
	}
	if len(rootSet) == 0 {
		return
	}
	roots := make([]string, 0, len(rootSet))
	for r := range rootSet {
		roots = append(roots, r)
	}
	// The longest first: a root within another is stripped before it.
	slices.SortFunc(roots, func(a, b string) int { return len(b) - len(a) })
	strip := func(s string) string {
		for _, r := range roots {
			s = strings.ReplaceAll(s, "file://"+r, "")
			s = strings.ReplaceAll(s, r, "")
		}
		return s
	}
	trim := func(s string) string {
		for _, r := range roots {
			if t, ok := strings.CutPrefix(s, r); ok {
				return t
			}
		}
		return s
	}
	for _, fs := range all {
		for i := range fs {
			f := &fs[i]
			if !isFile(f.Package) && !slices.ContainsFunc(f.Frames, func(fr string) bool { file, _ := cutLine(fr); return isFile(file) }) {
				continue
			}
			f.Package = trim(f.Package)
			f.Message, f.Output = strip(f.Message), strip(f.Output)
			for j, fr := range f.Frames {
				f.Frames[j] = trim(fr)
			}
		}
	}
	for _, ids := range [][]string{res.Passed, res.Skipped} {
		for i, id := range ids {
			ids[i] = trim(id)
		}
	}
}

// cutLine splits a frame "file:line" into its file and line.
func cutLine(fr string) (file, line string) {
	i := strings.LastIndexByte(fr, ':')
	if i < 0 {
		return fr, ""
	}
	return fr[:i], fr[i+1:]
}
