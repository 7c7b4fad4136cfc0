package offline

import (
	"fmt"
	"sort"
	"strings"
)

// The narrowest change: a helper that several functions call is a change
// that reaches every one of them, while the bug a failing test shows is
// most often in the one caller it goes through. A change inside a shared
// helper makes the failing test pass as surely as the caller's fix does,
// and no test may catch what it does to the other callers (a range helper
// widened from `<` to `<=` for one caller's sake lets every other caller
// take one more value). So candidates inside a function that two or more
// others call come after the candidates in its callers.

// scoreShared is what a candidate inside a shared function loses.
const scoreShared = 4

// callers maps each function the policy has read to the functions of the
// source files read that call it (recursion aside), by name: a name followed
// by "(" in their bodies ("inRange(", "self.lookup(", "this.at(").
func callers(models map[string]*fileModel) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, f := range models {
		if !f.source() {
			continue
		}
		for caller, span := range f.funcs() {
			// The first line is the function's own head.
			for n := span[0] + 1; n <= span[1]; n++ {
				text, ok := f.line(n)
				if !ok {
					continue
				}
				for _, m := range callRE.FindAllStringSubmatch(text, -1) {
					if callee := m[1]; callee != caller {
						if out[callee] == nil {
							out[callee] = map[string]bool{}
						}
						out[callee][caller] = true
					}
				}
			}
		}
	}
	return out
}

// preferNarrow lowers the score of the single-line candidates inside a
// function that two or more other functions call, saying so.
func preferNarrow(models map[string]*fileModel, cands []*Candidate) {
	calls := callers(models)
	for _, c := range cands {
		if c.Old == "" {
			continue
		}
		f := models[c.Path]
		if f == nil {
			continue
		}
		_, _, name, ok := f.funcSpan(c.Line)
		if !ok || len(calls[name]) < 2 {
			continue
		}
		var who []string
		for w := range calls[name] {
			who = append(who, w)
		}
		sort.Strings(who)
		c.Score -= scoreShared
		c.Why = append(append([]string(nil), c.Why...), fmt.Sprintf(
			"but %s is shared by %d callers (%s): a change there reaches them all, so their own lines come first",
			name, len(who), strings.Join(shortNames(who, 4), ", ")))
	}
}
