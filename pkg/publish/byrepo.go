package publish

import (
	"context"

	"github.com/redfix/redfix/pkg/repourl"
)

// ByRepo publishes remote repositories' pull requests on their forge and
// local repositories' (the demo, one-shot repairs) as the local publisher
// does. A remote repository that no configured forge serves is not
// published (the forge publisher says so).
type ByRepo struct {
	Forge *Forge
	Local *Local
}

// Publish publishes pr where its repository lives.
func (b ByRepo) Publish(ctx context.Context, pr PullRequest) (string, error) {
	if repourl.IsNetwork(pr.Task.Repo) {
		return b.Forge.Publish(ctx, pr)
	}
	return b.Local.Publish(ctx, pr)
}
