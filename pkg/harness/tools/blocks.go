package tools

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Block is one SEARCH/REPLACE edit: the exact existing lines and what
// replaces them. An empty Search appends Replace to the file (which creates
// a file that does not exist yet). Both end with a newline unless empty.
type Block struct {
	Search  string `json:"search"`
	Replace string `json:"replace"`
}

var (
	searchMarkRE  = regexp.MustCompile(`^\s*<{5,9}\s*SEARCH\s*$`)
	dividerMarkRE = regexp.MustCompile(`^\s*={5,9}\s*$`)
	replaceMarkRE = regexp.MustCompile(`^\s*>{5,9}\s*REPLACE\s*$`)
)

// BlockFormat reminds a policy of the format ParseBlocks reads.
const BlockFormat = "<<<<<<< SEARCH\nexact existing lines\n=======\nreplacement lines\n>>>>>>> REPLACE"

// ParseBlocks reads the SEARCH/REPLACE blocks in text (Aider's format):
//
//	<<<<<<< SEARCH
//	exact existing lines
//	=======
//	replacement lines
//	>>>>>>> REPLACE
//
// Text outside blocks (prose, file names, code fences) is ignored. A block
// left open, a stray marker, or no block at all is an error.
func ParseBlocks(text string) ([]Block, error) {
	// Line ends are "\n" whatever the model wrote: every "\r" that ends a
	// line goes ("0\r\r\n" once replaced as CRLF would still end in one).
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	const (
		outside = iota
		inSearch
		inReplace
	)
	var (
		blocks []Block
		state  = outside
		search []string
		repl   []string
		start  int
	)
	for i, l := range lines {
		n := i + 1
		switch state {
		case outside:
			switch {
			case searchMarkRE.MatchString(l):
				state, search, repl, start = inSearch, nil, nil, n
			case dividerMarkRE.MatchString(l) || replaceMarkRE.MatchString(l):
				return nil, fmt.Errorf("line %d: %q outside a block; every block starts with a <<<<<<< SEARCH line", n, strings.TrimSpace(l))
			}
		case inSearch:
			switch {
			case dividerMarkRE.MatchString(l):
				state = inReplace
			case searchMarkRE.MatchString(l):
				return nil, fmt.Errorf("line %d: a new SEARCH starts before the block of line %d has its ======= divider", n, start)
			case replaceMarkRE.MatchString(l):
				return nil, fmt.Errorf("line %d: >>>>>>> REPLACE before the ======= divider of the block of line %d", n, start)
			default:
				search = append(search, l)
			}
		case inReplace:
			switch {
			case replaceMarkRE.MatchString(l):
				blocks = append(blocks, Block{Search: joinLines(search), Replace: joinLines(repl)})
				state = outside
			case searchMarkRE.MatchString(l):
				return nil, fmt.Errorf("line %d: a new SEARCH starts before the block of line %d ends with >>>>>>> REPLACE", n, start)
			default:
				// A second divider is content: a file may hold one.
				repl = append(repl, l)
			}
		}
	}
	if state != outside {
		return nil, fmt.Errorf("the block starting on line %d does not end with >>>>>>> REPLACE", start)
	}
	if len(blocks) == 0 {
		return nil, errors.New("no SEARCH/REPLACE block found; write blocks as:\n" + BlockFormat)
	}
	return blocks, nil
}

func joinLines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// ApplyBlocks applies blocks to content in order, each to the result of the
// previous ones. A block's SEARCH must match exactly once: exactly, or, when
// no exact match exists, line by line ignoring indentation and trailing
// spaces (the replacement is then re-indented alike). A SEARCH that matches
// nowhere or more than once is an error naming the block, with the nearest
// lines or the places it matched.
func ApplyBlocks(content string, blocks []Block) (string, error) {
	for i, b := range blocks {
		which := fmt.Sprintf("block %d of %d", i+1, len(blocks))
		if strings.TrimSpace(b.Search) == "" {
			if content != "" && !strings.HasSuffix(content, "\n") {
				content += "\n"
			}
			content += b.Replace
			continue
		}
		next, err := applyOne(content, b)
		if err != nil {
			return "", fmt.Errorf("%s: %w", which, err)
		}
		content = next
	}
	return content, nil
}

func applyOne(content string, b Block) (string, error) {
	// Exact matches count only from the start of a line: blocks are whole
	// lines, and a match inside a line would keep a stray prefix.
	switch at := exactMatches(content, b.Search); {
	case len(at) == 1:
		return content[:at[0]] + b.Replace + content[at[0]+len(b.Search):], nil
	case len(at) > 1:
		lines := make([]int, len(at))
		for i, off := range at {
			lines[i] = strings.Count(content[:off], "\n") + 1
		}
		return "", fmt.Errorf("SEARCH matches %d places (lines %s); add surrounding lines until it matches exactly one",
			len(at), joinInts(lines))
	}
	// Without a trailing newline in the file, the last line cannot match a
	// SEARCH ending in one; the line match below handles that.
	lines := strings.SplitAfter(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	want := trimBlankEdges(strings.Split(strings.TrimSuffix(b.Search, "\n"), "\n"))
	var at []int
	for i := 0; i+len(want) <= len(lines); i++ {
		if linesMatch(lines[i:i+len(want)], want) {
			at = append(at, i)
		}
	}
	switch len(at) {
	case 0:
		return "", fmt.Errorf("SEARCH does not match the file, exactly or ignoring indentation; copy the lines exactly as they are.\n%s", nearest(lines, want))
	case 1:
	default:
		starts := make([]int, len(at))
		for i, a := range at {
			starts[i] = a + 1
		}
		return "", fmt.Errorf("SEARCH matches %d places when indentation is ignored (lines %s); add surrounding lines until it matches exactly one",
			len(at), joinInts(starts))
	}
	i := at[0]
	matched := lines[i : i+len(want)]
	repl := reindent(b.Replace, indentDelta(matched, want))
	if !strings.HasSuffix(matched[len(matched)-1], "\n") {
		repl = strings.TrimSuffix(repl, "\n") // the match ended the file without a newline
	}
	var out strings.Builder
	for _, l := range lines[:i] {
		out.WriteString(l)
	}
	out.WriteString(repl)
	for _, l := range lines[i+len(want):] {
		out.WriteString(l)
	}
	return out.String(), nil
}

func linesMatch(have, want []string) bool {
	for j, w := range want {
		if strings.TrimSpace(have[j]) != strings.TrimSpace(w) {
			return false
		}
	}
	return true
}

func trimBlankEdges(ls []string) []string {
	for len(ls) > 0 && strings.TrimSpace(ls[0]) == "" {
		ls = ls[1:]
	}
	for len(ls) > 0 && strings.TrimSpace(ls[len(ls)-1]) == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func leading(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// indentDelta is how the file's indentation differs from the SEARCH's, on the
// first non-blank line: add is a prefix the file has more, cut one it has
// less.
type delta struct{ add, cut string }

func indentDelta(have, want []string) delta {
	for j, w := range want {
		if strings.TrimSpace(w) == "" {
			continue
		}
		h, s := leading(strings.TrimRight(have[j], "\n")), leading(w)
		switch {
		case strings.HasSuffix(h, s):
			return delta{add: strings.TrimSuffix(h, s)}
		case strings.HasSuffix(s, h):
			return delta{cut: strings.TrimSuffix(s, h)}
		}
		return delta{}
	}
	return delta{}
}

func reindent(text string, d delta) string {
	if d.add == "" && d.cut == "" || text == "" {
		return text
	}
	ls := strings.SplitAfter(text, "\n")
	for i, l := range ls {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if d.cut != "" {
			l = strings.TrimPrefix(l, d.cut)
		}
		ls[i] = d.add + l
	}
	return strings.Join(ls, "")
}

// exactMatches returns the offsets where search occurs starting a line.
func exactMatches(content, search string) []int {
	var out []int
	for off := 0; off < len(content); {
		i := strings.Index(content[off:], search)
		if i < 0 {
			break
		}
		i += off
		if i == 0 || content[i-1] == '\n' {
			out = append(out, i)
		}
		off = i + 1
	}
	return out
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// nearest shows the window of the file most like want: the one sharing the
// most lines (ignoring indentation), else the one whose first line is most
// like want's.
func nearest(lines, want []string) string {
	if len(lines) == 0 {
		return "The file is empty."
	}
	if len(want) == 0 {
		return ""
	}
	bestAt, bestScore := 0, -1.0
	for i := range lines {
		score := 0.0
		for j := 0; j < len(want) && i+j < len(lines); j++ {
			if strings.TrimSpace(lines[i+j]) == strings.TrimSpace(want[j]) {
				score += 1
			} else {
				score += similarity(strings.TrimSpace(lines[i+j]), strings.TrimSpace(want[j])) * 0.9
			}
		}
		if score > bestScore {
			bestAt, bestScore = i, score
		}
	}
	end := min(bestAt+len(want)+2, len(lines))
	start := max(bestAt-2, 0)
	var b strings.Builder
	fmt.Fprintf(&b, "The nearest lines in the file (%d-%d) are:\n", start+1, end)
	for k := start; k < end; k++ {
		fmt.Fprintf(&b, "%6d\t%s\n", k+1, strings.TrimRight(lines[k], "\n"))
	}
	return b.String()
}

// similarity is a cheap 0..1 likeness of two lines: the share of the longer
// one's bytes in their longest common prefix and suffix, or in shared
// words when that is better.
func similarity(a, b string) float64 {
	if a == b {
		return 1
	}
	if a == "" || b == "" {
		return 0
	}
	long := max(len(a), len(b))
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	edge := float64(p+s) / float64(long)
	wa, wb := strings.Fields(a), strings.Fields(b)
	set := map[string]bool{}
	for _, w := range wa {
		set[w] = true
	}
	common := 0
	for _, w := range wb {
		if set[w] {
			common++
		}
	}
	words := float64(common) / float64(max(len(wa), len(wb)))
	return max(edge, words)
}
