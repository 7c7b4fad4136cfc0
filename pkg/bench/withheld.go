package bench

import (
	"context"
	"strings"

	"github.com/redfix/redfix/pkg/publish"
)

// Withheld is the bench's publisher: it records that the pipeline would
// have published, and publishes nothing.
type Withheld struct{}

// Publish publishes nothing and names what would have been published.
func (Withheld) Publish(_ context.Context, pr publish.PullRequest) (string, error) {
	return "bench://withheld/" + pr.Task.ID, nil
}

// ResultsPath is where a bench of the tasks file tasksPath with the named
// policy keeps its results by default: TASKS.POLICY.results.jsonl, the
// policy's name kept to letters, digits, dots and dashes.
func ResultsPath(tasksPath, policy string) string {
	return strings.TrimSuffix(tasksPath, ".jsonl") + "." + safeFileName(policy) + ".results.jsonl"
}

// safeFileName keeps letters, digits, dots and dashes.
func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, s)
}
