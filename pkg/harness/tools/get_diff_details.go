package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/gitrepo"
)

// GetDiffDetails is the tool that shows a commit, by default the blamed one.
const GetDiffDetails = "get_diff_details"

// GetDiffDetailsArgs are get_diff_details' arguments: Commit defaults to
// the task's blame commit.
type GetDiffDetailsArgs struct {
	Commit string `json:"commit,omitempty" description:"A commit hash or revision; defaults to the blamed commit."`
}

//go:embed get_diff_details.md
var getDiffDetailsDoc string

var getDiffDetailsTool = Define(GetDiffDetails, KindCommit, getDiffDetailsDoc, (*Session).diffDetails)

func (s *Session) diffDetails(ctx context.Context, args GetDiffDetailsArgs) (Observation, error) {
	rev := strings.TrimSpace(args.Commit)
	if rev == "" {
		rev = s.t.Bisection.Blame
	}
	note := ""
	if rev == "" {
		latest, where, err := s.latestTestedChange(ctx)
		if err != nil {
			return Observation{}, err
		}
		if latest == "" {
			return problem("The task has no blamed commit, and no commit touches the failing tests' packages; name a commit."), nil
		}
		rev = latest
		note = fmt.Sprintf("The task has no blamed commit: this is the most recent commit that touched %s. Name another commit to see it.\n\n", where)
	}
	sha, err := s.ws.Repo.Resolve(ctx, rev)
	if err != nil {
		if ctx.Err() != nil {
			return Observation{}, fmt.Errorf("resolve %s: %w", rev, ctx.Err())
		}
		if errors.Is(err, gitrepo.ErrUnknownRevision) {
			return problem("No commit %q in the repository.", rev), nil
		}
		return Observation{}, err
	}
	c, err := s.ws.Repo.Show(ctx, sha)
	if err != nil {
		return Observation{}, fmt.Errorf("describe commit %s: %w", sha, err)
	}
	var b strings.Builder
	b.WriteString(note)
	fmt.Fprintf(&b, "commit %s\nAuthor: %s\nDate:   %s\n\n    %s\n", c.SHA, c.Author, c.Date, c.Subject)
	if c.Body != "" {
		b.WriteString("\n" + indent(c.Body, "    ") + "\n")
	}
	fmt.Fprintf(&b, "\nFiles changed (%d):\n", len(c.Files))
	for _, f := range c.Files {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	b.WriteString("\n")
	// Keep room for the header within the observation's limit.
	shown := clip.Middle(c.Diff, max(s.env.OutputLimit-b.Len()-200, 1000))
	b.WriteString(shown)
	return Observation{Content: b.String(), Commit: &CommitResult{SHA: c.SHA, Diff: shown}}, nil
}

// latestTestedChange is the most recent commit that touched the directories
// of the failing tests' packages (the repository when none resolves), and
// how to say where.
func (s *Session) latestTestedChange(ctx context.Context) (sha, where string, err error) {
	var dirs []string
	for _, id := range s.t.Tests() {
		if t, err := s.resolveTest(id); err == nil && !slices.Contains(dirs, t.Dir) {
			dirs = append(dirs, t.Dir)
		}
	}
	where = "the repository"
	args := []string{"log", "-1", "--format=%H", "HEAD"}
	if len(dirs) > 0 {
		where = "the failing tests' package (" + strings.Join(dirs, ", ") + ")"
		args = append(append(args, "--"), dirs...)
	}
	out, err := s.ws.Repo.Git(ctx, args...)
	if err != nil {
		return "", "", fmt.Errorf("find the latest change of %s: %w", where, err)
	}
	return strings.TrimSpace(out), where, nil
}
