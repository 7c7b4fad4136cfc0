package ingest

import (
	"errors"
	"fmt"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/repourl"
)

// ErrNotAllowed marks a submission for a repository that the allowlist
// does not name.
var ErrNotAllowed = errors.New("repository not allowed")

// Canonicalize puts s.Repo in its canonical form (pkg/repourl), the one
// everything downstream keys on, and checks that the commits and the
// branch are revisions git cannot take for options. The error wraps
// ErrInvalid and says what is wrong.
func Canonicalize(s *Submission) error {
	if s.Repo == "" {
		return fmt.Errorf("%w: no repository", ErrInvalid)
	}
	repo, err := repourl.Canonical(s.Repo)
	if err != nil {
		return fmt.Errorf("%w: repo: %w", ErrInvalid, err)
	}
	s.Repo = repo
	if s.Commit == "" {
		return fmt.Errorf("%w: no commit", ErrInvalid)
	}
	for _, f := range []struct{ name, v string }{{"commit", s.Commit}, {"good", s.Good}, {"branch", s.Branch}} {
		if f.v == "" {
			continue
		}
		if err := gitrepo.CheckRevision(f.v); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalid, f.name, err)
		}
	}
	return nil
}

// Admit reports whether a canonical submission may be triaged: it came
// through a route that authenticated its sender (Verified), or its
// repository matches allow.
func Admit(s Submission, allow *repourl.Allowlist) error {
	if s.Verified || allow.Allows(s.Repo) {
		return nil
	}
	return fmt.Errorf("%w: %s matches no pattern of the allowlist", ErrNotAllowed, s.Repo)
}

// Deliveries decide whether a repository's fix can be delivered
// (publish.Ways); the error says why not.
type Deliveries interface {
	Deliverable(repoURL string) error
}

// Deliverable reports whether a canonical submission's repository has a
// way to receive a fix, so that a repository with none is refused where
// its reports come in, with the reason, and never repaired for nothing. A
// nil ways admits every repository.
func Deliverable(s Submission, ways Deliveries) error {
	if ways == nil {
		return nil
	}
	return ways.Deliverable(s.Repo)
}
