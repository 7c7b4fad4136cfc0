package offline

import (
	"strings"
)

// maxContext is how many lines of context a block may take on each side to
// make its SEARCH text unique in the file.
const maxContext = 8

// Block renders one SEARCH/REPLACE block.
func Block(search, replace []string) string {
	var b strings.Builder
	b.WriteString("<<<<<<< SEARCH\n")
	for _, l := range search {
		b.WriteString(l + "\n")
	}
	b.WriteString("=======\n")
	for _, l := range replace {
		b.WriteString(l + "\n")
	}
	b.WriteString(">>>>>>> REPLACE\n")
	return b.String()
}

// makeBlock turns the change of lines into SEARCH/REPLACE text whose SEARCH
// part occurs exactly once in the file, taking context lines around the
// change until it does. ok is false when no unique block can be made from
// the lines the policy knows.
func makeBlock(lines []string, c change) (search, replace []string, ok bool) {
	content := strings.Join(lines, "\n")
	for grow := 0; grow <= maxContext; grow++ {
		for _, ab := range [][2]int{{grow, grow}, {grow, grow + 1}, {grow + 1, grow}} {
			s, e := c.start-ab[0], c.end+ab[1]
			if s < 1 {
				s = 1
			}
			if e > len(lines) {
				e = len(lines)
			}
			if e < s {
				continue
			}
			seq := lines[s-1 : e]
			if !knownText(seq) {
				continue
			}
			text := strings.Join(seq, "\n")
			if strings.TrimSpace(text) == "" || strings.Count(content, text) != 1 {
				continue
			}
			replace = append(append(append([]string(nil), lines[s-1:c.start-1]...), c.repl...), lines[c.end:e]...)
			return seq, replace, true
		}
	}
	return nil, nil, false
}

func knownText(seq []string) bool {
	for _, l := range seq {
		if l == unknown {
			return false
		}
	}
	return true
}

// blocks renders the candidate's changes against the file's lines, one
// block per change, each computed on the file as the earlier blocks leave
// it. It also returns the file as the edit leaves it and the blocks that
// undo it.
func blocks(lines []string, changes []change) (fwd, inv string, after []string, ok bool) {
	cur := append([]string(nil), lines...)
	var f strings.Builder
	var undo []change
	shift := 0
	for _, c := range changes {
		c.start += shift
		c.end += shift
		search, replace, ok := makeBlock(cur, c)
		if !ok {
			return "", "", nil, false
		}
		f.WriteString(Block(search, replace))
		old := append([]string(nil), cur[c.start-1:c.end]...)
		cur = applyChanges(cur, []change{c})
		undo = append(undo, change{start: c.start, end: c.start + len(c.repl) - 1, repl: old})
		shift += len(c.repl) - (c.end - c.start + 1)
	}
	var iv strings.Builder
	work := append([]string(nil), cur...)
	shift = 0
	for _, u := range undo {
		u.start += shift
		u.end += shift
		search, replace, ok := makeBlock(work, u)
		if !ok {
			return "", "", nil, false
		}
		iv.WriteString(Block(search, replace))
		work = applyChanges(work, []change{u})
		shift += len(u.repl) - (u.end - u.start + 1)
	}
	return f.String(), iv.String(), cur, true
}
