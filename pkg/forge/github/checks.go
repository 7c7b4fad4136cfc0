package github

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/redfix/redfix/pkg/forge"
)

// maxCheckOutput is GitHub's limit on a check run's summary and text
// (65535 characters each); longer ones are cut, with a note.
const maxCheckOutput = 65535

// state is the status and conclusion to send for r.
func state(r forge.Check) (status, conclusion *string) {
	switch {
	case r.Conclusion != "":
		return gogithub.String(forge.CheckCompleted), gogithub.String(r.Conclusion)
	case r.Status != "":
		return gogithub.String(r.Status), nil
	}
	return nil, nil
}

// output is r's output, nil when it has none.
func output(r forge.Check) *gogithub.CheckRunOutput {
	if r.Title == "" && r.Summary == "" && r.Text == "" {
		return nil
	}
	title := r.Title
	if title == "" {
		title = r.Name
	}
	o := &gogithub.CheckRunOutput{Title: gogithub.String(title), Summary: gogithub.String(cutOutput(r.Summary))}
	if r.Text != "" {
		o.Text = gogithub.String(cutOutput(r.Text))
	}
	return o
}

// cutOutput keeps s within GitHub's limit, on a rune boundary.
func cutOutput(s string) string {
	const note = "\n\n… (cut)"
	if utf8.RuneCountInString(s) <= maxCheckOutput {
		return s
	}
	runes := []rune(s)
	return string(runes[:maxCheckOutput-utf8.RuneCountInString(note)]) + note
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return gogithub.String(s)
}

// CreateCheck makes a check run on c.Commit of repo and returns its id. A
// check run needs the App's checks:write permission (GitHub refuses them
// to plain tokens of users).
func (f *Forge) CreateCheck(ctx context.Context, repo forge.RepoID, c forge.Check) (int64, error) {
	if c.Name == "" || c.Commit == "" {
		return 0, errors.New("a check run needs a name and a commit")
	}
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return 0, err
	}
	opts := gogithub.CreateCheckRunOptions{
		Name: c.Name, HeadSHA: c.Commit, DetailsURL: optString(c.DetailsURL), ExternalID: optString(c.ExternalID), Output: output(c),
	}
	opts.Status, opts.Conclusion = state(c)
	if opts.Conclusion != nil {
		opts.CompletedAt = &gogithub.Timestamp{Time: time.Now()}
	}
	cr, _, err := cl.Checks.CreateCheckRun(ctx, owner, name, opts)
	if err != nil {
		return 0, fmt.Errorf("create check run %q on %s/%s@%s: %w", c.Name, owner, name, c.Commit, err)
	}
	return cr.GetID(), nil
}

// UpdateCheck changes check run id of repo: its status or conclusion,
// output and link (its commit stays). c.Name is needed: the client always
// sends one.
func (f *Forge) UpdateCheck(ctx context.Context, repo forge.RepoID, id int64, c forge.Check) error {
	if c.Name == "" {
		return errors.New("a check run's update needs its name")
	}
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return err
	}
	opts := gogithub.UpdateCheckRunOptions{Name: c.Name, DetailsURL: optString(c.DetailsURL), ExternalID: optString(c.ExternalID), Output: output(c)}
	opts.Status, opts.Conclusion = state(c)
	if opts.Conclusion != nil {
		opts.CompletedAt = &gogithub.Timestamp{Time: time.Now()}
	}
	if _, _, err := cl.Checks.UpdateCheckRun(ctx, owner, name, id, opts); err != nil {
		return fmt.Errorf("update check run %d on %s/%s: %w", id, owner, name, err)
	}
	return nil
}

// CommitChecks lists the check runs on ref of repo, only those named name
// when it is not empty (the latest of each name, as GitHub filters them).
func (f *Forge) CommitChecks(ctx context.Context, repo forge.RepoID, ref, name string) ([]forge.CheckState, error) {
	cl, owner, rname, err := f.client(ctx, repo)
	if err != nil {
		return nil, err
	}
	opts := &gogithub.ListCheckRunsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}
	if name != "" {
		opts.CheckName = gogithub.String(name)
	}
	var out []forge.CheckState
	for range maxListPages {
		res, resp, err := cl.Checks.ListCheckRunsForRef(ctx, owner, rname, ref, opts)
		if err != nil {
			return nil, fmt.Errorf("list the check runs of %s/%s@%s: %w", owner, rname, ref, err)
		}
		for _, cr := range res.CheckRuns {
			out = append(out, forge.CheckState{
				ID: cr.GetID(), Name: cr.GetName(), Commit: cr.GetHeadSHA(),
				Status: cr.GetStatus(), Conclusion: cr.GetConclusion(),
				Title: cr.GetOutput().GetTitle(), Summary: cr.GetOutput().GetSummary(),
				DetailsURL: cr.GetDetailsURL(), ExternalID: cr.GetExternalID(), URL: cr.GetHTMLURL(),
			})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}
