package publish

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// step is the part of a trajectory line the summary reads.
type step struct {
	N      int `json:"step"`
	Action struct {
		Name    string          `json:"name"`
		Args    json.RawMessage `json:"args"`
		Thought string          `json:"thought"`
	} `json:"action"`
	Observation struct {
		Content string `json:"content"`
		IsError bool   `json:"is_error"`
		Tests   *struct {
			OK     bool              `json:"ok"`
			Passed []string          `json:"passed"`
			Failed []json.RawMessage `json:"failed"`
			Build  []json.RawMessage `json:"build"`
		} `json:"tests"`
		Edit *struct {
			Applied     bool   `json:"applied"`
			Diagnostics string `json:"diagnostics"`
		} `json:"edit"`
	} `json:"observation"`
	ElapsedMS int64 `json:"elapsed_ms"`
}

// Per-step limits of the summary.
const (
	maxThought = 240
	maxTarget  = 120
)

// TrajectorySummary is a collapsed (<details>) list of the trajectory's
// steps, one line each: the action, what it acted on, what came back, and
// the agent's reason. It fits in room characters: when the steps do not,
// the first and last are kept and the summary says how many are left out
// and where they are. Lines that do not parse are counted, not hidden.
func TrajectorySummary(jsonl []byte, room int) string {
	var lines []string
	bad := 0
	sc := bufio.NewScanner(bytes.NewReader(jsonl))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var st step
		if err := json.Unmarshal(raw, &st); err != nil || st.Action.Name == "" {
			bad++
			continue
		}
		lines = append(lines, stepLine(st))
	}
	total := len(lines)
	head := "<details>\n<summary>The agent's " + plural(total, "step", "steps") + ", one line each</summary>\n\n"
	tail := "\n</details>\n\n"
	if bad > 0 {
		tail = fmt.Sprintf("\n_%s of the trajectory could not be read as steps; they are in `trajectory.jsonl`._\n", plural(bad, "line", "lines")) + tail
	}
	if total == 0 {
		return "_The trajectory has no steps to summarise._\n\n"
	}
	budget := room - utf8.RuneCountInString(head+tail)
	// sizes[i] is the size of the first i lines, newlines included.
	sizes := make([]int, total+1)
	for i, l := range lines {
		sizes[i+1] = sizes[i] + utf8.RuneCountInString(l) + 1
	}
	if sizes[total] <= budget {
		return head + strings.Join(lines, "\n") + "\n" + tail
	}
	// Keep the first and the last steps, as many as fit, and say what is
	// left out between them.
	gapNote := func(n int) string {
		return fmt.Sprintf("\n_… %s left out here to stay within GitHub's size limit for a description; `trajectory.jsonl` has every step._\n", plural(n, "step", "steps"))
	}
	fits := func(keep int) bool {
		first := (keep + 1) / 2
		last := keep - first
		return sizes[first]+(sizes[total]-sizes[total-last])+utf8.RuneCountInString(gapNote(total-keep))+1 <= budget
	}
	lo, hi := 1, total-1 // the largest keep that fits, by bisection
	if fits(2) {
		lo = 2
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if fits(mid) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		first := (lo + 1) / 2
		last := lo - first
		shown := append(append(append([]string{}, lines[:first]...), gapNote(total-lo)), lines[total-last:]...)
		return head + strings.Join(shown, "\n") + "\n" + tail
	}
	if budget > 200 {
		return fmt.Sprintf("_The summary of the %s does not fit in GitHub's size limit for a description; `trajectory.jsonl` has every step._\n\n", plural(total, "step", "steps"))
	}
	return ""
}

// stepLine is one step as a Markdown list item.
func stepLine(st step) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d. %s", st.N, code(st.Action.Name))
	if target := argsSummary(st.Action.Args); target != "" {
		b.WriteString(" " + codeSpan(target, maxTarget))
	}
	b.WriteString(" → " + outcome(st))
	if th := strings.TrimSpace(st.Action.Thought); th != "" {
		b.WriteString(" — _" + inline(cut(strings.Join(strings.Fields(th), " "), maxThought)) + "_")
	}
	return b.String()
}

// argsSummary is the action's arguments as a person reads them: the path,
// the query or the tests, not the whole JSON.
func argsSummary(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var a map[string]any
	if err := json.Unmarshal(raw, &a); err != nil {
		return ""
	}
	var parts []string
	for _, k := range []string{"path", "pattern", "query", "name", "class", "commit"} {
		if v, ok := a[k].(string); ok && v != "" {
			parts = append(parts, v)
		}
	}
	if sl, ok := a["start_line"].(float64); ok {
		el, _ := a["end_line"].(float64)
		parts = append(parts, fmt.Sprintf("lines %d–%d", int(sl), int(el)))
	}
	if ln, ok := a["line"].(float64); ok {
		parts = append(parts, fmt.Sprintf("line %d", int(ln)))
	}
	if ts, ok := a["tests"].([]any); ok && len(ts) > 0 {
		var names []string
		for _, t := range ts {
			if s, ok := t.(string); ok {
				names = append(names, s)
			}
		}
		parts = append(parts, strings.Join(names, ", "))
	}
	return strings.Join(parts, " ")
}

// outcome is what the step's observation says, in a few words.
func outcome(st step) string {
	o := st.Observation
	switch {
	case o.Tests != nil && o.Tests.OK:
		return fmt.Sprintf("tests pass (%d)", len(o.Tests.Passed))
	case o.Tests != nil && len(o.Tests.Build) > 0:
		return "build fails"
	case o.Tests != nil:
		return fmt.Sprintf("%s fail", plural(len(o.Tests.Failed), "test", "tests"))
	case o.Edit != nil && !o.Edit.Applied:
		return "edit not applied"
	case o.Edit != nil && strings.TrimSpace(o.Edit.Diagnostics) != "":
		return "edited, with findings"
	case o.Edit != nil:
		return "edited"
	case o.IsError:
		return "error: " + codeSpan(firstLine(o.Content), 100)
	case st.Action.Name == "exit":
		return "done"
	}
	n := strings.Count(strings.TrimRight(o.Content, "\n"), "\n") + 1
	if strings.TrimSpace(o.Content) == "" {
		n = 0
	}
	return plural(n, "line", "lines")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
