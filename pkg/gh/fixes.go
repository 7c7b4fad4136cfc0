package gh

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/google/go-github/v62/github"
)

// DefaultMaxPulls is how many open pull requests HumanFixes looks at when
// MaxPulls is 0: the most recently updated.
const DefaultMaxPulls = 50

// HumanFixes finds open pull requests by people that may already fix a
// failure: ones that name a failing test or the commit that broke it, or
// change a file the failure points at. Pull requests by bots (an App's,
// or redfix's own branches) do not count.
type HumanFixes struct {
	Clients  *Clients
	MaxPulls int
	// OwnBranchPrefix marks the bot's own pull requests by their head
	// branch ("redfix/" when empty), for a plain token whose pull requests
	// look like a person's.
	OwnBranchPrefix string
}

// OpenHumanFix returns the URL of an open pull request by a person on repo
// that mentions one of terms (in its title or body) or changes one of files
// (paths in the repository; a path ending in a changed file's name counts),
// and why it matched; "" when there is none. checked is false when repo is
// not on the configured GitHub (or none is configured): the search did not
// happen.
func (h HumanFixes) OpenHumanFix(ctx context.Context, repo string, files, terms []string) (url, why string, checked bool, err error) {
	if h.Clients == nil || !h.Clients.Serves(repo) {
		return "", "", false, nil
	}
	owner, name, err := ParseRepo(repo)
	if err != nil {
		return "", "", false, err
	}
	cl, err := h.Clients.ForRepo(ctx, owner, name)
	if err != nil {
		return "", "", false, err
	}
	max := h.MaxPulls
	if max <= 0 {
		max = DefaultMaxPulls
	}
	own := h.OwnBranchPrefix
	if own == "" {
		own = "redfix/"
	}
	prs, _, err := cl.PullRequests.List(ctx, owner, name, &github.PullRequestListOptions{
		State: "open", Sort: "updated", Direction: "desc", ListOptions: github.ListOptions{PerPage: min(max, 100)},
	})
	if err != nil {
		return "", "", true, fmt.Errorf("list the open pull requests of %s/%s: %w", owner, name, err)
	}
	for i, pr := range prs {
		if i >= max {
			break
		}
		login := pr.GetUser().GetLogin()
		if strings.EqualFold(pr.GetUser().GetType(), "Bot") || strings.HasSuffix(login, "[bot]") || strings.HasPrefix(pr.GetHead().GetRef(), own) {
			continue
		}
		text := pr.GetTitle() + "\n" + pr.GetBody()
		for _, t := range terms {
			if mentions(text, t) {
				return pr.GetHTMLURL(), fmt.Sprintf("by %s, it mentions %s", login, t), true, nil
			}
		}
		if len(files) == 0 {
			continue
		}
		changed, _, err := cl.PullRequests.ListFiles(ctx, owner, name, pr.GetNumber(), &github.ListOptions{PerPage: 100})
		if err != nil {
			return "", "", true, fmt.Errorf("list the files of %s/%s#%d: %w", owner, name, pr.GetNumber(), err)
		}
		for _, c := range changed {
			for _, f := range files {
				if sameFile(c.GetFilename(), f) {
					return pr.GetHTMLURL(), fmt.Sprintf("by %s, it changes %s", login, c.GetFilename()), true, nil
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
