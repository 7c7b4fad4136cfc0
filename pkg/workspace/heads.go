package workspace

import (
	"context"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/repourl"
)

// DefaultHead is src's default branch and the commit at its head, as src
// says now (git ls-remote --symref src HEAD); env authenticates to a remote
// (nil for none).
func DefaultHead(ctx context.Context, src string, env []string) (branch, commit string, err error) {
	out, err := gitrepo.Repo{Dir: "."}.GitWith(ctx, env, "ls-remote", "--symref", "--", src, "HEAD")
	if err != nil {
		return "", "", fmt.Errorf("default branch of %s: %w", redactURL(src), err)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "ref:" && f[2] == "HEAD":
			branch = strings.TrimPrefix(f[1], "refs/heads/")
		case len(f) == 2 && f[1] == "HEAD":
			commit = f[0]
		}
	}
	if commit == "" {
		return "", "", fmt.Errorf("default branch of %s: the repository has no HEAD", redactURL(src))
	}
	return branch, commit, nil
}

// DefaultHead is DefaultHead with the mirrors' credentials; for a remote,
// the head's commit is fetched into its mirror, so that the work trees of
// the mirror can check it out.
func (m *Mirrors) DefaultHead(ctx context.Context, src string) (branch, commit string, err error) {
	env, err := m.auth(ctx, src)
	if err != nil {
		return "", "", err
	}
	branch, commit, err = DefaultHead(ctx, src, env)
	if err != nil || !repourl.IsNetwork(src) {
		return branch, commit, err
	}
	if _, err := m.Mirror(ctx, src, commit); err != nil {
		return "", "", err
	}
	return branch, commit, nil
}
