package judge

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/unidiff"
)

// plantedRE matches text that addresses the reviewing model instead of
// describing the code: an attempt to steer the judge.
var plantedRE = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+|these\s+)?(previous|prior|above|earlier|preceding|system|original)\s+(instructions?|prompts?|rules|guidelines)`,
	`\byou\s+are\s+now\s+(an?\s+|the\s+)?(ai|assistant|reviewer|judge|model|llm)\b`,
	`\bnew\s+(system\s+)?instructions\s*:`,
	`\b(note|message|instruction)s?\s+(to|for)\s+(the\s+)?(ai|llm|model|reviewer|judge|assistant)\b`,
	`\b(you|reviewers?|judges?|the\s+(ai|llm|model|assistant))\s+(must|should|shall)\s+(accept|approve|merge|pass)\b`,
	`\b(accept|approve)\s+(this|the)\s+(patch|change|diff|pull\s+request|pr|fix)\s+(without|regardless|no\s+matter)`,
	`"acceptable"\s*:\s*true`,
}, "|"))

// planted looks for an instruction to the judge in the untrusted text the
// prompt quotes: the patch's added lines (comments, strings), the failing
// tests' output, the blame commit's message, the author's summary. It
// returns where it is and what it says, or "".
func planted(in Input) string {
	check := func(where, text string) string {
		if m := plantedRE.FindString(text); m != "" {
			return fmt.Sprintf("%s: %q", where, oneLine(m, 120))
		}
		return ""
	}
	if files, err := unidiff.Parse(in.Patch); err == nil {
		for _, f := range files {
			for _, l := range f.Changes() {
				if l.Added() {
					if s := check(fmt.Sprintf("the patch, %s:%d", f.Path(), l.NewLine), l.Text); s != "" {
						return s
					}
				}
			}
		}
	}
	for _, f := range in.Task.Failures {
		if s := check("the output of "+f.ID(), f.Message+"\n"+f.Output); s != "" {
			return s
		}
	}
	if s := check("the blame commit's message", in.Task.Bisection.Subject+"\n"+in.BlameMessage); s != "" {
		return s
	}
	return check("the author's explanation", in.Summary)
}
