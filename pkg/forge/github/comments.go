package github

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/redfix/redfix/pkg/forge"
)

// MaxCommentRunes is the longest comment GitHub takes (65536 characters);
// Comment clips a longer body to it.
const MaxCommentRunes = 65536

// clipComment keeps body within MaxCommentRunes, saying so at its end.
func clipComment(body string) string {
	if utf8.RuneCountInString(body) <= MaxCommentRunes {
		return body
	}
	const note = "\n\n… (clipped: GitHub takes at most 65536 characters)"
	keep := MaxCommentRunes - utf8.RuneCountInString(note)
	i := 0
	for n := 0; n < keep; n++ {
		_, size := utf8.DecodeRuneInString(body[i:])
		i += size
	}
	return body[:i] + note
}

// Permission is what a user may do on a repository, as GitHub answers it.
type Permission struct {
	// Level is GitHub's base level: "admin", "write", "read" or "none"
	// (the maintain role is "write", triage "read").
	Level string `json:"permission"`
	// Role is the role's own name ("maintain", "triage", a custom role).
	Role string `json:"role_name"`
}

// CanWrite reports whether the permission lets its holder push: write,
// maintain or admin.
func (p Permission) CanWrite() bool {
	switch strings.ToLower(p.Level) {
	case "admin", "write":
		return true
	}
	switch strings.ToLower(p.Role) {
	case "admin", "maintain", "write":
		return true
	}
	return false
}

// Comment posts body (clipped to MaxCommentRunes) on pull request or issue
// number of repo and returns the comment's page.
func (f *Forge) Comment(ctx context.Context, repo forge.RepoID, number int, body string) (string, error) {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return "", err
	}
	com, _, err := cl.Issues.CreateComment(ctx, owner, name, number, &gogithub.IssueComment{Body: gogithub.String(clipComment(body))})
	if err != nil {
		return "", fmt.Errorf("comment on %s/%s#%d: %w", owner, name, number, err)
	}
	return com.GetHTMLURL(), nil
}

// Acknowledge says a command was heard: a +1 reaction on its comment.
func (f *Forge) Acknowledge(ctx context.Context, c forge.Comment) error {
	cl, owner, name, err := f.client(ctx, c.Repo)
	if err != nil {
		return err
	}
	if _, _, err := cl.Reactions.CreateIssueCommentReaction(ctx, owner, name, c.ID, "+1"); err != nil {
		return fmt.Errorf("react to comment %d on %s/%s: %w", c.ID, owner, name, err)
	}
	return nil
}

// Permission reads user's permission on repo from GitHub: the only source
// redfix trusts for it (never a comment's text or its author_association).
// Write, maintain and admin may write.
func (f *Forge) Permission(ctx context.Context, repo forge.RepoID, user string) (forge.Permission, error) {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return forge.Permission{}, err
	}
	// go-github's RepositoryPermissionLevel lacks role_name: read it raw.
	req, err := cl.NewRequest("GET", fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", owner, name, user), nil)
	if err != nil {
		return forge.Permission{}, fmt.Errorf("read %s's permission on %s/%s: %w", user, owner, name, err)
	}
	var p Permission
	if _, err := cl.Do(ctx, req, &p); err != nil {
		return forge.Permission{}, fmt.Errorf("read %s's permission on %s/%s: %w", user, owner, name, err)
	}
	return forge.Permission{Level: p.Level, Role: p.Role, Write: p.CanWrite()}, nil
}
