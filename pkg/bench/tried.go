package bench

import (
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/harness"
)

// Tried is how far down its hypotheses an episode found its answer: the
// candidate patches it tested (harness.Result's PatchesTested) and how many
// of them it tested before its final patch (TriedBefore; all of them when
// it ended with none). A repair found first has TriedBefore 0.
type Tried struct {
	PatchesTested int `json:"patches_tested"`
	TriedBefore   int `json:"tried_before"`
}

// triedOf is the episode's count, from its result.
func triedOf(r harness.Result) Tried {
	return Tried{PatchesTested: r.PatchesTested, TriedBefore: r.TriedBefore}
}

// triedColumn is a task's column of candidates tried before the final
// patch, one figure an episode ("0", "3/1"), the solved ones marked
// with no sign and the unsolved with "✗" ("5✗": five tried, none right).
func triedColumn(r Result) string {
	var parts []string
	for _, e := range r.Samples {
		p := fmt.Sprint(e.TriedBefore)
		if !e.Solved {
			p += "✗"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "/")
}

// meanTriedBefore is the mean number of candidates the solved episodes
// tried before the patch that solved them; ok is false when none solved.
func meanTriedBefore(results []Result) (mean float64, ok bool) {
	n, sum := 0, 0
	for _, r := range results {
		for _, e := range r.Samples {
			if e.Solved {
				n++
				sum += e.TriedBefore
			}
		}
	}
	if n == 0 {
		return 0, false
	}
	return float64(sum) / float64(n), true
}
