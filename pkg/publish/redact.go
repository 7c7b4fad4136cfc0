package publish

import (
	"context"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/redact"
	"github.com/redfix/redfix/pkg/task"
)

// Publisher opens a pull request and returns its address.
type Publisher interface {
	Publish(ctx context.Context, pr PullRequest) (string, error)
}

// Redacting redacts a pull request before Publisher publishes it: its task
// (failures, outputs), summary, trajectory and blame subject. The patch
// loses only the bot's own secret values, so that it still applies.
type Redacting struct {
	Publisher Publisher
	Redactor  *redact.Redactor
}

// Publish publishes pr, redacted.
func (p Redacting) Publish(ctx context.Context, pr PullRequest) (string, error) {
	t, err := redact.Value(p.Redactor, pr.Task)
	if err != nil {
		return "", fmt.Errorf("redact task %s: %w", pr.Task.ID, err)
	}
	gates, err := redact.Value(p.Redactor, pr.Gates)
	if err != nil {
		return "", fmt.Errorf("redact gates of task %s: %w", pr.Task.ID, err)
	}
	pr.Task, pr.Gates = t, gates
	pr.Summary = p.Redactor.String(pr.Summary)
	pr.BlameSubject = p.Redactor.String(pr.BlameSubject)
	pr.Trajectory = p.Redactor.JSONLines(pr.Trajectory)
	pr.Patch = p.Redactor.Values(pr.Patch)
	return p.Publisher.Publish(ctx, pr)
}

// RevisionPublisher pushes a revision and answers in its thread
// (Forge.PublishRevision).
type RevisionPublisher interface {
	PublishRevision(ctx context.Context, r Revision) (string, error)
}

// RedactingRevisions redacts a revision before it is pushed and answered,
// as Redacting does a pull request.
type RedactingRevisions struct {
	Publisher RevisionPublisher
	Redactor  *redact.Redactor
}

// PublishRevision publishes r, redacted.
func (p RedactingRevisions) PublishRevision(ctx context.Context, r Revision) (string, error) {
	gates, err := redact.Value(p.Redactor, r.Gates)
	if err != nil {
		return "", fmt.Errorf("redact gates of task %s: %w", r.Task.ID, err)
	}
	r.Gates = gates
	r.Summary = p.Redactor.String(r.Summary)
	r.Reason = p.Redactor.String(r.Reason)
	r.Revision.Request = p.Redactor.String(r.Revision.Request)
	r.Patch = p.Redactor.Values(r.Patch)
	return p.Publisher.PublishRevision(ctx, r)
}

// hideSecrets hides the credentials' secrets and anything shaped like one
// of the forge's tokens.
func hideSecrets(s string, cred forge.Credentials) string {
	for _, sec := range cred.Secrets {
		if len(sec) >= 8 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	if cred.Shapes != nil {
		s = cred.Shapes.ReplaceAllString(s, "[redacted]")
	}
	return s
}

func redactFailures(fs []task.Failure, cred forge.Credentials) []task.Failure {
	out := make([]task.Failure, len(fs))
	for i, f := range fs {
		f.Message = hideSecrets(f.Message, cred)
		f.Output = hideSecrets(f.Output, cred)
		out[i] = f
	}
	return out
}
