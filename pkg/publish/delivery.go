package publish

import (
	"errors"
	"fmt"

	"github.com/redfix/redfix/pkg/repourl"
)

// ErrNoDelivery marks a repository whose fix no configured way can
// deliver: such a repository is refused where its reports come in, never
// repaired for nothing, and a publish that meets it is not retried.
var ErrNoDelivery = errors.New("no way to deliver a fix to the repository")

// Way is how a repository's fix is delivered: the local publisher
// (WayLocal), or the name of the forge driver that serves it ("github", a
// plain git remote's).
type Way string

// WayLocal is a local repository's way: a branch in it and a directory.
const WayLocal Way = "local"

// Ways decides, for each repository, how its fix will be delivered, as
// the workers' publisher delivers it (ByRepo, or Local alone): a local
// path locally; a remote repository, when fixes go to forges, through the
// driver that serves it, which must open change requests or push a branch
// (and, when it says which URLs it pushes to, take this one).
type Ways struct {
	Forges Forges
	// OnForges is set when remote repositories' fixes are published on
	// their forges (publish.mode is not local).
	OnForges bool
}

// For is the way of the repository at repoURL (canonical); the error wraps
// ErrNoDelivery and says why there is none.
func (w Ways) For(repoURL string) (Way, error) {
	if repourl.IsLocal(repoURL) {
		return WayLocal, nil
	}
	if !w.OnForges || w.Forges == nil {
		return "", fmt.Errorf("%w: %s is a remote repository, and fixes are delivered to local paths only (publish.mode local)", ErrNoDelivery, repoURL)
	}
	d, _, err := w.Forges.ForURL(repoURL)
	if err != nil {
		return "", fmt.Errorf("%w: no configured forge serves %s (configure its forge, or a git_remotes prefix that holds it): %w", ErrNoDelivery, repoURL, err)
	}
	if _, ok := d.(ChangeRequests); ok {
		return Way(d.Name()), nil
	}
	if _, ok := d.(Branches); !ok {
		return "", fmt.Errorf("%w: %s is on %s, which cannot take a fix", ErrNoDelivery, repoURL, d.Name())
	}
	if c, ok := d.(interface{ Delivers(repoURL string) error }); ok {
		if err := c.Delivers(repoURL); err != nil {
			return "", fmt.Errorf("%w: %w", ErrNoDelivery, err)
		}
	}
	return Way(d.Name()), nil
}

// Deliverable reports whether the repository at repoURL (canonical) has a
// way; the error wraps ErrNoDelivery and says why not.
func (w Ways) Deliverable(repoURL string) error {
	_, err := w.For(repoURL)
	return err
}
