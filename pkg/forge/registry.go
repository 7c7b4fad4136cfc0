package forge

import (
	"context"
	"fmt"
)

// Forges are the configured forge drivers: the one place that chooses, for
// a repository, the driver that serves it. The zero value (and nil) serves
// nothing.
type Forges struct {
	drivers []Driver
}

// New registers drivers; the first that serves a repository is its forge.
func New(drivers ...Driver) *Forges {
	f := &Forges{}
	for _, d := range drivers {
		if d != nil {
			f.drivers = append(f.drivers, d)
		}
	}
	return f
}

// Drivers are the registered drivers, in order.
func (f *Forges) Drivers() []Driver {
	if f == nil {
		return nil
	}
	return append([]Driver(nil), f.drivers...)
}

// Named is the driver registered as name.
func (f *Forges) Named(name string) (Driver, bool) {
	for _, d := range f.Drivers() {
		if d.Name() == name {
			return d, true
		}
	}
	return nil, false
}

// For is the driver that serves repo; the error wraps ErrNotServed when
// none does.
func (f *Forges) For(repo RepoID) (Driver, error) {
	for _, d := range f.Drivers() {
		if d.Serves(repo) {
			return d, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", repo, ErrNotServed)
}

// ForURL is the driver that serves the repository at repoURL, and the
// repository's identity.
func (f *Forges) ForURL(repoURL string) (Driver, RepoID, error) {
	id, err := RepoOf(repoURL)
	if err != nil {
		return nil, RepoID{}, fmt.Errorf("%w: %w", ErrNotServed, err)
	}
	d, err := f.For(id)
	return d, id, err
}

// ChangeOf reads a change request's web address through the driver whose
// change request it is; ok is false when it is none of theirs (a local
// pull request's path, say).
func (f *Forges) ChangeOf(url string) (d Driver, repo RepoID, number int, ok bool) {
	for _, d := range f.Drivers() {
		if repo, n, ok := d.ChangeOf(url); ok {
			return d, repo, n, true
		}
	}
	return nil, RepoID{}, 0, false
}

// CloneAuth is a driver that gives git the credentials to fetch from and
// push to its repositories.
type CloneAuth interface {
	// GitEnv is the environment of one git command reaching repoURL;
	// nil for a URL the driver does not hand its credentials to.
	GitEnv(ctx context.Context, repoURL string) ([]string, error)
}

// GitEnv is the git credentials for repoURL from the driver that serves
// it; nil when none does, or it needs none.
func (f *Forges) GitEnv(ctx context.Context, repoURL string) ([]string, error) {
	d, _, err := f.ForURL(repoURL)
	if err != nil {
		return nil, nil
	}
	a, ok := d.(CloneAuth)
	if !ok {
		return nil, nil
	}
	return a.GitEnv(ctx, repoURL)
}

// As is the driver serving repo as the capability C a consumer declares;
// the error wraps ErrNotServed when no driver serves repo, ErrUnsupported
// when its driver lacks C.
func As[C any](f *Forges, repo RepoID) (C, error) {
	var zero C
	d, err := f.For(repo)
	if err != nil {
		return zero, err
	}
	c, ok := d.(C)
	if !ok {
		return zero, fmt.Errorf("%s on %s: %w", repo, d.Name(), ErrUnsupported)
	}
	return c, nil
}
