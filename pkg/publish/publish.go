// Package publish turns a patch that passed the gates into a pull request:
// its branch, its title and the body a reviewer reads, with the evidence (the
// failure, the blame commit, the gates) and the agent's trajectory attached.
// Local publishes into a local repository and a directory, for the demo and
// the tests; Forge publishes on the repository's forge, with the same
// Branch, Title and Body.
package publish

import (
	"strings"
	"unicode/utf8"

	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/task"
)

// PullRequest is everything a pull request is made of.
type PullRequest struct {
	Task  task.Task
	Patch string // unified diff against Task.Commit
	Gates []task.Gate
	// Summary is the agent's own account of the fix.
	Summary string
	// Trajectory is the agent's episode as JSON lines, attached as is.
	Trajectory   []byte
	BlameSubject string
	Policy       string // the policy that wrote the patch ("offline", "llm:<model>")
	Steps        int    // the agent's steps
	// Candidates is how many attempts were made at the task, Chosen the
	// one published (1-based) and Rounds its feedback rounds; Spend is
	// what the model calls of every attempt used and cost.
	Candidates, Chosen, Rounds int
	Spend                      llm.Spend
	// Reviewers ("login" or "org/team") and Labels are what the
	// repository's .redfix.yaml asks for, on top of redfix's own.
	Reviewers, Labels []string
}

// Branch is the pull request's branch for t: one per failure group.
func Branch(t task.Task) string {
	id := t.Fingerprint
	if id == "" {
		id = t.ID
	}
	id = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, id)
	if len(id) > 12 {
		id = id[:12]
	}
	if id == "" {
		id = "unnamed"
	}
	return "redfix/" + id
}

// maxTitle is where titles are cut, under the 72 characters git log and
// GitHub's lists show.
const maxTitle = 71

// Title is the pull request's one line: what fails, since which commit.
// The blame's subject is shortened first, then dropped, to stay under
// maxTitle characters.
func Title(pr PullRequest) string {
	t := pr.Task
	what := "fix: " + t.Title() + " fails"
	blame := t.Bisection.Blame
	if blame == "" {
		return cut(what, maxTitle)
	}
	since := what + " since " + shortSHA(blame)
	subject := pr.BlameSubject
	if subject == "" {
		subject = t.Bisection.Subject
	}
	subject = strings.TrimSpace(subject)
	if subject == "" {
		return cut(since, maxTitle)
	}
	room := maxTitle - utf8.RuneCountInString(since+": ")
	if room < 12 { // not enough for a subject a person could read
		return cut(since, maxTitle)
	}
	return since + ": " + cut(subject, room)
}

// shortSHA is the 7-character abbreviation git shows.
func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// cut shortens s to at most n runes, marking the cut with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}
