package llmpolicy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
)

// The text ReAct format, for models served without tool calling: the tools
// are described in the system prompt, the model ends each answer with an
// Action line and an Arguments object, and observations come back as user
// messages.

const reactFormat = `
TOOL FORMAT: this server has no function-calling interface. Call exactly one tool per answer by ending your answer with these two parts and nothing after them:
Action: <tool name>
Arguments: <one JSON object with the tool's arguments, on one or more lines>
For example:
Thought: the failure points at %[1]s line 7.
Action: go_to_line
Arguments: {"path": %[2]q, "line": 7}
The observation comes back in the next message. To finish, use the exit tool.

Tools:
%[3]s`

// reactTools lists the tools with their arguments for the system prompt.
func reactTools(specs []tools.Spec) string {
	var b strings.Builder
	for _, s := range specs {
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Description)
		props, _ := s.Parameters["properties"].(map[string]any)
		required := map[string]bool{}
		for _, r := range stringsOf(s.Parameters["required"]) {
			required[r] = true
		}
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p, _ := props[n].(map[string]any)
			typ, _ := p["type"].(string)
			desc, _ := p["description"].(string)
			opt := ""
			if !required[n] {
				opt = ", optional"
			}
			fmt.Fprintf(&b, "    %s (%s%s): %s\n", n, typ, opt, desc)
		}
	}
	return b.String()
}

func stringsOf(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		var out []string
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

var (
	actionLine = regexp.MustCompile(`(?m)^[ \t*_]*Action[ \t*_]*:[ \t*_` + "`" + `]*([A-Za-z_][A-Za-z0-9_]*)`)
	argsLine   = regexp.MustCompile(`(?m)^[ \t*_]*(?:Arguments|Action Input|Args)[ \t*_]*:`)
	fenceLine  = regexp.MustCompile("(?m)^```[a-zA-Z]*[ \t]*$")
)

// parseReAct reads the last Action of a text answer: the thought before it,
// the tool's name and the arguments after it (code fences dropped; text that
// is not one JSON object is kept as written, for the harness to report).
func parseReAct(text string) (thought, name, args string, ok bool) {
	locs := actionLine.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		return strings.TrimSpace(text), "", "", false
	}
	loc := locs[len(locs)-1]
	thought = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text[:loc[0]]), "Thought:"))
	name = text[loc[2]:loc[3]]
	rest := text[loc[1]:]
	if m := argsLine.FindStringIndex(rest); m != nil {
		rest = rest[m[1]:]
	} else {
		rest = ""
	}
	rest = strings.TrimSpace(fenceLine.ReplaceAllString(rest, ""))
	if rest == "" {
		return thought, name, "{}", true
	}
	// Keep the first JSON value when the model wrote more after it.
	dec := json.NewDecoder(strings.NewReader(rest))
	var v json.RawMessage
	if dec.Decode(&v) == nil {
		return thought, name, string(v), true
	}
	return thought, name, rest, true
}

// reactCall is how a step's action is replayed in the text format.
func reactCall(a harness.Action) string {
	var b strings.Builder
	if a.Thought != "" {
		b.WriteString("Thought: ")
		b.WriteString(a.Thought)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "Action: %s\nArguments: %s", a.Name, argsText(a.Args))
	return b.String()
}
