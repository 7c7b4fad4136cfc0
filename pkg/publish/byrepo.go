package publish

import (
	"context"

	"github.com/redfix/redfix/pkg/repourl"
)

// ByRepo publishes remote repositories' pull requests on GitHub and local
// repositories' (the demo, one-shot repairs) as the local publisher does.
type ByRepo struct {
	GitHub *GitHub
	Local  *Local
}

// Publish publishes pr where its repository lives.
func (b ByRepo) Publish(ctx context.Context, pr PullRequest) (string, error) {
	if repourl.IsNetwork(pr.Task.Repo) {
		return b.GitHub.Publish(ctx, pr)
	}
	return b.Local.Publish(ctx, pr)
}
