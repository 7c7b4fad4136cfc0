package llmpolicy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
)

// Long episodes: as the conversation nears the model's window, the
// observations of older steps are condensed to one line each, oldest first.
// The task, the last few steps and the latest view of each file stay whole;
// only when that is still too much are those views condensed too, and last
// the recent observations cut shorter.

const (
	// charsPerToken is a deliberately low estimate (code and logs tokenize
	// densely), so that the estimate errs on the side of condensing.
	charsPerToken = 3
	// keepRecent steps keep their observations whole.
	keepRecent = 4
	// answerReserve is kept free for the model's answer, in tokens.
	answerReserve = 4096
	// minRecentChars is how short recent observations may be cut, last.
	minRecentChars = 2000
)

// condense shrinks the observations in obs (one per step of ep, as sent)
// until the whole estimate fits within budget tokens; budget <= 0 leaves
// them whole. It returns how many observations it condensed.
func condense(ep *harness.Episode, obs []string, budget int, fixed int) int {
	steps := ep.Steps
	if budget <= 0 {
		return 0
	}
	total := func() int {
		n := fixed
		for _, o := range obs {
			n += (len(o) + 16) / charsPerToken
		}
		return n
	}
	if total() <= budget {
		return 0
	}
	old := len(steps) - keepRecent
	latestView := latestFileViews(ep)
	condensed := 0
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < old && total() > budget; i++ {
			if strings.HasPrefix(obs[i], condensedMark) {
				continue
			}
			if pass == 0 && latestView[i] {
				continue // the current view of a file: keep it while we can
			}
			obs[i] = condensedLine(steps[i])
			condensed++
		}
	}
	// Still too long: cut the recent observations, longest first, down to
	// a floor; the head and tail of each stay.
	for limit := 16000; total() > budget && limit >= minRecentChars; limit /= 2 {
		for i := max(old, 0); i < len(obs); i++ {
			if len(obs[i]) > limit {
				obs[i] = clip.Middle(obs[i], limit)
				condensed++
			}
		}
	}
	return condensed
}

const condensedMark = "[condensed"

// condensedLine is what an old step's observation becomes: what was asked
// and what came of it, in the harness's own words, never quoting the
// (untrusted) output itself.
func condensedLine(s harness.Step) string {
	o := s.Observation
	lines := strings.Count(o.Content, "\n") + 1
	var what string
	switch {
	case o.Tests != nil:
		what = fmt.Sprintf("tests ok=%v, %d passed, %d failed", o.Tests.OK, len(o.Tests.Passed), len(o.Tests.Failed))
		if len(o.Tests.Failed) > 0 {
			ids := make([]string, 0, 3)
			for i, f := range o.Tests.Failed {
				if i == 3 {
					break
				}
				ids = append(ids, f.ID())
			}
			what += " (" + strings.Join(ids, ", ") + ")"
		}
	case o.Edit != nil:
		what = fmt.Sprintf("edit applied=%v", o.Edit.Applied)
		if o.Edit.Diagnostics != "" {
			what += ", with static-analysis findings"
		}
	case o.IsError:
		what = fmt.Sprintf("an error of %d line(s)", lines)
	default:
		what = fmt.Sprintf("%d line(s) of output", lines)
	}
	return fmt.Sprintf("%s to save context window: %s returned %s; call it again if you need the details]", condensedMark, s.Action.Name, what)
}

// latestFileViews marks, for each file, the last step that showed it: by a
// tool that lists a file's lines (tools.KindListing).
func latestFileViews(ep *harness.Episode) map[int]bool {
	last := map[string]int{}
	for i, s := range ep.Steps {
		if ep.Kind(s.Action.Name) != tools.KindListing || s.Observation.IsError {
			continue
		}
		var a struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(s.Action.Args, &a) == nil && a.Path != "" {
			last[a.Path] = i
		}
	}
	out := make(map[int]bool, len(last))
	for _, i := range last {
		out[i] = true
	}
	return out
}
