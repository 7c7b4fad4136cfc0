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
	d, err := b.Deliver(ctx, pr)
	return d.URL, err
}

// Deliver publishes pr where its repository lives, and says what it
// delivered.
func (b ByRepo) Deliver(ctx context.Context, pr PullRequest) (Delivery, error) {
	if repourl.IsNetwork(pr.Task.Repo) {
		return b.Forge.Deliver(ctx, pr)
	}
	url, err := b.Local.Publish(ctx, pr)
	return Delivery{URL: url}, err
}
