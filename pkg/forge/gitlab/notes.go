package gitlab

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/redfix/redfix/pkg/forge"
)

// MaxNoteRunes is the longest note (and description) redfix writes: GitLab
// takes a million characters; Comment clips a longer body to it.
const MaxNoteRunes = 1_000_000

// clipNote keeps body within MaxNoteRunes, saying so at its end.
func clipNote(body string) string {
	if utf8.RuneCountInString(body) <= MaxNoteRunes {
		return body
	}
	const note = "\n\n… (clipped: GitLab takes at most a million characters)"
	runes := []rune(body)
	return string(runes[:MaxNoteRunes-utf8.RuneCountInString(note)]) + note
}

// Comment posts body as a note on merge request number of repo and
// returns the note's address.
func (f *Forge) Comment(ctx context.Context, repo forge.RepoID, number int, body string) (string, error) {
	path, err := f.project(repo)
	if err != nil {
		return "", err
	}
	n, _, err := f.c.Notes.CreateMergeRequestNote(path, int64(number), &gl.CreateMergeRequestNoteOptions{Body: gl.Ptr(clipNote(body))}, gl.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("note on %s!%d: %w", path, number, err)
	}
	return f.WebURL(path) + "/-/merge_requests/" + strconv.Itoa(number) + "#note_" + strconv.FormatInt(n.ID, 10), nil
}

// Acknowledge says a command was heard: a thumbs-up on its note.
func (f *Forge) Acknowledge(ctx context.Context, c forge.Comment) error {
	path, err := f.project(c.Repo)
	if err != nil {
		return err
	}
	if _, _, err := f.c.AwardEmoji.CreateMergeRequestAwardEmojiOnNote(path, int64(c.Number), c.ID, &gl.CreateAwardEmojiOptions{Name: "thumbsup"}, gl.WithContext(ctx)); err != nil {
		return fmt.Errorf("award an emoji to note %d on %s!%d: %w", c.ID, path, c.Number, err)
	}
	return nil
}

// accessLevels name GitLab's roles.
var accessLevels = map[gl.AccessLevelValue]string{
	gl.NoPermissions: "none", gl.MinimalAccessPermissions: "minimal_access", gl.GuestPermissions: "guest",
	gl.PlannerPermissions: "planner", gl.ReporterPermissions: "reporter", gl.SecurityManagerPermissions: "security_manager",
	gl.DeveloperPermissions: "developer", gl.MaintainerPermissions: "maintainer", gl.OwnerPermissions: "owner", gl.AdminPermissions: "admin",
}

// Permission reads user's access to repo from GitLab's member API, the
// groups' memberships included: the only source redfix trusts for it
// (never a note's text or the payload's claims). Developer and higher may
// write; an account that is no member, or none at all, may not.
func (f *Forge) Permission(ctx context.Context, repo forge.RepoID, user string) (forge.Permission, error) {
	path, err := f.project(repo)
	if err != nil {
		return forge.Permission{}, err
	}
	id, err := f.userID(ctx, user)
	if err != nil || id == 0 {
		return forge.Permission{Level: "none"}, err
	}
	m, _, err := f.c.ProjectMembers.GetInheritedProjectMember(path, id, gl.WithContext(ctx))
	if errors.Is(err, gl.ErrNotFound) {
		return forge.Permission{Level: "none"}, nil
	}
	if err != nil {
		return forge.Permission{}, fmt.Errorf("read %s's membership of %s: %w", user, path, err)
	}
	if m.State != "" && !strings.EqualFold(m.State, "active") {
		return forge.Permission{Level: "none", Role: m.State}, nil
	}
	level := accessLevels[m.AccessLevel]
	if level == "" {
		level = strconv.Itoa(int(m.AccessLevel))
	}
	return forge.Permission{Level: level, Role: level, Write: m.AccessLevel >= gl.DeveloperPermissions}, nil
}
