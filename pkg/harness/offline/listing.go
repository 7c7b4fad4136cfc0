package offline

import (
	"regexp"
	"strconv"
	"strings"
)

// A listing format: a line number, then sep, then the line's text.
type listingFormat struct {
	re   *regexp.Regexp // captures the number and the text
	bare *regexp.Regexp // an empty source line (trailing separator trimmed)
}

// listingFormats are the numbered-line formats ParseListing understands,
// the harness's own ("%6d\t%s") first.
var listingFormats = []listingFormat{
	{regexp.MustCompile(`^\s*(\d+)\t(.*)$`), regexp.MustCompile(`^\s*(\d+)$`)},
	{regexp.MustCompile(`^\s*(\d+) \| (.*)$`), regexp.MustCompile(`^\s*(\d+) \|$`)},
	{regexp.MustCompile(`^\s*(\d+)\| ?(.*)$`), regexp.MustCompile(`^\s*(\d+)\|$`)},
	{regexp.MustCompile(`^\s*L?(\d+): (.*)$`), regexp.MustCompile(`^\s*L?(\d+):$`)},
	{regexp.MustCompile(`^\s*L?(\d+):(.*)$`), regexp.MustCompile(`^\s*L?(\d+):$`)},
}

// omittedRE is the mark clip.Middle leaves where it cut an
// observation.
var omittedRE = regexp.MustCompile(`^\[… \d+ characters omitted …\]$`)

// ParseListing reads a numbered listing of a file (read_file and go_to_line
// observations) into line number → text. It tries each known format and
// keeps the one that reads the longest run of increasing line numbers; lines
// of other text (headers, truncation marks) are skipped.
func ParseListing(content string) map[int]string {
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	var best map[int]string
	for _, f := range listingFormats {
		got := map[int]string{}
		last, cut := 0, false
		for _, l := range lines {
			if omittedRE.MatchString(l) {
				// The loop cut the observation's middle out: the lines on
				// either side of the cut may be partial.
				delete(got, last)
				cut = true
				continue
			}
			var n int
			var text string
			if m := f.re.FindStringSubmatch(l); m != nil {
				n, _ = strconv.Atoi(m[1])
				text = m[2]
			} else if m := f.bare.FindStringSubmatch(l); m != nil {
				n, _ = strconv.Atoi(m[1])
			} else {
				continue
			}
			if n <= last || n == 0 {
				continue // not a listing line: numbers only grow
			}
			if !cut {
				got[n] = text
			}
			last, cut = n, false
		}
		if len(got) > len(best) {
			best = got
		}
	}
	if best == nil {
		best = map[int]string{}
	}
	return best
}

// listingTotalRE finds how many lines the listed file has, in a listing's
// header or footer: the harness's "path (N lines), lines a-b:" and "[Shown:
// lines a-b of N. …]", or "(lines a-b of N)".
var listingTotalRE = regexp.MustCompile(`\((\d+) lines?\), lines \d+-\d+|\blines \d+-\d+ of (\d+)\b`)

// ListingTotal is the number of lines of the file a listing shows part or
// all of, as its header or footer says; 0 when it does not say.
func ListingTotal(content string) int {
	for _, l := range strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n") {
		if listingFormats[0].re.MatchString(l) {
			continue // a line of the file, which may say anything
		}
		if m := listingTotalRE.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1] + m[2])
			return n
		}
	}
	return 0
}

// unknown marks a line of a file whose text no observation has shown.
const unknown = "\x00unknown"

// fileModel is what the policy knows of one file: the text of the lines
// observations have shown.
type fileModel struct {
	path  string
	lines []string // lines[i] is line i+1; unknown where not seen
}

func newFileModel(path string) *fileModel { return &fileModel{path: path} }

func (f *fileModel) merge(listing map[int]string) {
	for n, text := range listing {
		for len(f.lines) < n {
			f.lines = append(f.lines, unknown)
		}
		f.lines[n-1] = text
	}
}

// extend makes the model total lines long, the lines no observation has
// shown unknown, so that a listing cut short does not pass for the whole
// file.
func (f *fileModel) extend(total int) {
	for len(f.lines) < total {
		f.lines = append(f.lines, unknown)
	}
}

// line returns line n's text and whether it is known.
func (f *fileModel) line(n int) (string, bool) {
	if n < 1 || n > len(f.lines) || f.lines[n-1] == unknown {
		return "", false
	}
	return f.lines[n-1], true
}

// complete reports whether every line up to the last one seen is known.
func (f *fileModel) complete() bool {
	if len(f.lines) == 0 {
		return false
	}
	for _, l := range f.lines {
		if l == unknown {
			return false
		}
	}
	return true
}

func (f *fileModel) clone() *fileModel {
	return &fileModel{path: f.path, lines: append([]string(nil), f.lines...)}
}

// find returns the 1-based starts of every occurrence of seq in lines.
func find(lines, seq []string) []int {
	var at []int
	if len(seq) == 0 {
		return nil
	}
outer:
	for i := 0; i+len(seq) <= len(lines); i++ {
		for j, s := range seq {
			if lines[i+j] != s {
				continue outer
			}
		}
		at = append(at, i+1)
	}
	return at
}

// funcSpan is the span of the top-level declaration holding line n: from its
// "func" line to its closing "}" at column 0. ok is false outside functions.
func (f *fileModel) funcSpan(n int) (start, end int, name string, ok bool) {
	for s := n; s >= 1; s-- {
		t, known := f.line(s)
		if !known {
			return 0, 0, "", false
		}
		if s != n && t == "}" {
			return 0, 0, "", false
		}
		if m := funcDeclRE.FindStringSubmatch(t); m != nil {
			for e := s; e <= len(f.lines); e++ {
				if te, _ := f.line(e); te == "}" || (e == s && strings.HasSuffix(te, "}")) {
					if e < n {
						return 0, 0, "", false
					}
					return s, e, m[1], true
				}
			}
			return s, len(f.lines), m[1], true
		}
	}
	return 0, 0, "", false
}

var funcDeclRE = regexp.MustCompile(`^func\s+(?:\([^)]*\)\s*)?(\w+)`)

// funcs lists the file's function declarations: name → [start, end].
func (f *fileModel) funcs() map[string][2]int {
	out := map[string][2]int{}
	for i, t := range f.lines {
		if m := funcDeclRE.FindStringSubmatch(t); m != nil {
			if s, e, _, ok := f.funcSpan(i + 1); ok {
				out[m[1]] = [2]int{s, e}
			}
		}
	}
	return out
}
