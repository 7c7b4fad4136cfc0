// Package inflight reads what is in flight on a repository's forge, through
// its driver: redfix's own open change requests (counted for a
// repository's limit on them) and those of people that may already fix a
// failure (triage's human_fix_in_flight rule).
package inflight

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/redfix/redfix/pkg/forge"
)

// Forges chooses the forge a repository lives on (forge.Forges).
type Forges interface {
	ForURL(repoURL string) (forge.Driver, forge.RepoID, error)
}

// Changes lists a repository's open change requests.
type Changes interface {
	OpenChangeRequests(ctx context.Context, repo forge.RepoID, l forge.Listing) ([]forge.ChangeRequest, error)
}

// Files lists the paths a change request changes.
type Files interface {
	ChangedFiles(ctx context.Context, repo forge.RepoID, number int) ([]string, error)
}

// changesOf is the repository at repoURL on a forge that lists change
// requests; ok is false when there is none (no forge serves it, or its
// forge cannot list them).
func changesOf(forges Forges, repoURL string) (Changes, forge.RepoID, bool) {
	if forges == nil {
		return nil, forge.RepoID{}, false
	}
	d, repo, err := forges.ForURL(repoURL)
	if err != nil {
		return nil, forge.RepoID{}, false
	}
	c, ok := d.(Changes)
	return c, repo, ok
}

// Own counts redfix's own open change requests on a repository: those
// whose head branch is under forge.BranchPrefix.
type Own struct {
	Forges Forges
}

// OpenPullRequests is how many of redfix's change requests are open on
// repo (a repository URL); 0 for one that is on no forge.
func (o Own) OpenPullRequests(ctx context.Context, repo string) (int, error) {
	c, id, ok := changesOf(o.Forges, repo)
	if !ok {
		return 0, nil
	}
	open, err := c.OpenChangeRequests(ctx, id, forge.Listing{HeadPrefix: forge.BranchPrefix})
	return len(open), err
}

// DefaultMaxOpen is how many open change requests HumanFixes looks at when
// MaxOpen is 0: the most recently updated.
const DefaultMaxOpen = 50

// HumanFixes finds open change requests by people that may already fix a
// failure: ones that name a failing test or the commit that broke it, or
// change a file the failure points at. Those by bots, and redfix's own
// (by their head branch, for a plain token whose change requests look
// like a person's), do not count.
type HumanFixes struct {
	Forges  Forges
	MaxOpen int
}

// OpenHumanFix returns the address of an open change request by a person
// on repo that mentions one of terms (in its title or body) or changes one
// of files (paths in the repository; a path ending in a changed file's
// name counts), and why it matched; "" when there is none. checked is
// false when repo is on no forge that lists change requests: the search
// did not happen.
func (h HumanFixes) OpenHumanFix(ctx context.Context, repo string, files, terms []string) (url, why string, checked bool, err error) {
	c, id, ok := changesOf(h.Forges, repo)
	if !ok {
		return "", "", false, nil
	}
	max := h.MaxOpen
	if max <= 0 {
		max = DefaultMaxOpen
	}
	open, err := c.OpenChangeRequests(ctx, id, forge.Listing{Limit: max, RecentlyUpdated: true})
	if err != nil {
		return "", "", true, err
	}
	lister, canList := c.(Files)
	for _, cr := range open {
		if cr.Author.Bot || strings.HasPrefix(cr.Head, forge.BranchPrefix) {
			continue
		}
		text := cr.Title + "\n" + cr.Body
		for _, t := range terms {
			if mentions(text, t) {
				return cr.URL, fmt.Sprintf("by %s, it mentions %s", cr.Author.Login, t), true, nil
			}
		}
		if len(files) == 0 || !canList {
			continue
		}
		changed, err := lister.ChangedFiles(ctx, id, cr.Number)
		if err != nil {
			return "", "", true, err
		}
		for _, c := range changed {
			for _, f := range files {
				if sameFile(c, f) {
					return cr.URL, fmt.Sprintf("by %s, it changes %s", cr.Author.Login, c), true, nil
				}
			}
		}
	}
	return "", "", true, nil
}

// sameFile says a repository path and a failure's path name the same file:
// equal, or one ends with the other at a directory boundary (a failure's
// paths may be relative to a package, or absolute on CI's machine).
func sameFile(repoPath, failurePath string) bool {
	a, b := path.Clean(repoPath), path.Clean(strings.TrimPrefix(failurePath, "./"))
	return a == b || strings.HasSuffix(b, "/"+a) || strings.HasSuffix(a, "/"+b)
}

// mentions says text names term as a whole word: TestAdd is not named by
// TestAddAll.
func mentions(text, term string) bool {
	if term == "" {
		return false
	}
	for off := 0; ; {
		i := strings.Index(text[off:], term)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(term)
		if (i == 0 || !wordByte(text[i-1])) && (end == len(text) || !wordByte(text[end])) {
			return true
		}
		off = i + 1
	}
}

func wordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}
