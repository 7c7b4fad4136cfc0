package keep

import (
	"context"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
)

// maxPaths bounds the conflicting paths a closing comment names.
const maxPaths = 20

// moved closes f when the default branch moved so that its change no
// longer applies on top of head: redfix's own git merges the pull
// request's head onto head in the bare mirror (a tree, no work tree, no
// checkout that ever ran anything) and lists the conflicting paths. A
// change that still applies is left alone, as is a pull request onto
// another branch than the default one.
func (k *Keeper) moved(ctx context.Context, where on, t task.Task, f task.Fix, branch, head string) (closing, error) {
	pr, err := where.cr.ChangeRequest(ctx, where.repo, f.Number)
	if err != nil {
		return closing{}, err
	}
	if pr.State != forge.StateOpen || pr.Base != branch {
		return closing{}, nil // closed since (its event records it), or onto another branch
	}
	change := pr.HeadSHA
	if err := gitrepo.CheckRevision(change); err != nil {
		return closing{}, fmt.Errorf("head of %s#%d: %w", f.Repo, f.Number, err)
	}
	mirror, err := k.Checkouts.Mirror(ctx, t.Repo, change)
	if err != nil {
		return closing{}, err
	}
	paths, err := Conflicts(ctx, mirror, head, change)
	if err != nil || len(paths) == 0 {
		return closing{}, err
	}
	return closing{reason: task.CloseConflict, comment: ConflictComment(t.Tests(), paths, branch, head)}, nil
}

// Conflicts are the paths where merging change onto onto conflicts, none
// when it merges cleanly. It is computed in repo (a bare mirror) by git's
// merge-tree: no work tree is written and nothing of the repository runs.
func Conflicts(ctx context.Context, repo gitrepo.Repo, onto, change string) ([]string, error) {
	// git exits 1 on conflicts, with the merged tree and the conflicting
	// paths on its output; any other failure leaves no tree.
	out, err := repo.Git(ctx, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", onto, change)
	fields := strings.Split(out, "\x00")
	if !isOID(fields[0]) {
		if err == nil {
			err = fmt.Errorf("no tree in %q", first(out, 200))
		}
		return nil, fmt.Errorf("merge %s onto %s: %w", task.Short(change), task.Short(onto), err)
	}
	var paths []string
	for _, p := range fields[1:] {
		if p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 && err != nil {
		return nil, fmt.Errorf("merge %s onto %s: %w", task.Short(change), task.Short(onto), err)
	}
	return paths, nil
}

// ConflictComment is the closing comment of a pull request whose change
// conflicts in paths with the default branch at head, where its failing
// tests still fail.
func ConflictComment(tests, paths []string, branch, head string) string {
	shown := paths
	more := ""
	if len(shown) > maxPaths {
		shown, more = shown[:maxPaths], fmt.Sprintf(" and %d more", len(paths)-maxPaths)
	}
	return fmt.Sprintf("Closing: %s moved to %s and this change no longer applies on top of it: it conflicts in %s%s. "+
		"The failing tests still fail there (%s), so the failure needs a new change made on top of %s; redfix does not rebase its pull requests.",
		codes([]string{branch}), codes([]string{task.Short(head)}), codes(shown), more, codes(tests), codes([]string{branch}))
}

// isOID reports whether s is a full object name (SHA-1 or SHA-256).
func isOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

func first(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
