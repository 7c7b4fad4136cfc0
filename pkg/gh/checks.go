package gh

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"

	"github.com/redfix/redfix/pkg/forge"
)

// The conclusions of a completed check run that redfix gives.
const (
	ConclusionSuccess        = "success"
	ConclusionFailure        = "failure"
	ConclusionNeutral        = "neutral"
	ConclusionActionRequired = "action_required"
	ConclusionSkipped        = "skipped"
)

// maxCheckOutput is GitHub's limit on a check run's summary and text
// (65535 characters each); longer ones are cut, with a note.
const maxCheckOutput = 65535

// CheckRun is what redfix says on a commit as a check run: a name, and
// either a status still going ("queued", "in_progress") or a conclusion.
type CheckRun struct {
	// Name is the check's name as the commit shows it ("redfix / triage").
	Name string
	// HeadSHA is the commit; needed to create, ignored on update.
	HeadSHA string
	// Status is "queued", "in_progress" or "completed"; empty with a
	// Conclusion means completed, empty without one means queued.
	Status string
	// Conclusion, when set, completes the run (ConclusionFailure, …).
	Conclusion string
	// Title and Summary are the output's heading and Markdown body; Text is
	// an optional longer Markdown part. A run with a Summary needs a Title
	// (Name is used when it is empty).
	Title, Summary, Text string
	// DetailsURL links to more (a pull request, the dashboard).
	DetailsURL string
	// ExternalID is redfix's own reference (a task or group id).
	ExternalID string
}

// CheckRunState is a check run as GitHub holds it.
type CheckRunState struct {
	ID         int64
	Name       string
	HeadSHA    string
	Status     string
	Conclusion string
	Title      string
	Summary    string
	DetailsURL string
	ExternalID string
	HTMLURL    string
}

// Checks writes check runs on the commits of repositories of the
// configured GitHub. A check run needs the App's checks:write permission
// (GitHub refuses them to plain tokens of users).
type Checks struct {
	Clients *Clients
}

// ErrNotServed is returned for a repository that is not on the configured
// GitHub (or when no GitHub is configured): nothing was sent.
var ErrNotServed = errors.New("the repository is not on the configured GitHub")

// client is the client and owner/name of repoURL.
func (c Checks) client(ctx context.Context, repoURL string) (*Client, string, string, error) {
	if c.Clients == nil || !c.Clients.Serves(repoURL) {
		return nil, "", "", fmt.Errorf("%s: %w", repoURL, ErrNotServed)
	}
	owner, name, err := ParseRepo(repoURL)
	if err != nil {
		return nil, "", "", err
	}
	cl, err := c.Clients.ForRepo(ctx, owner, name)
	if err != nil {
		return nil, "", "", err
	}
	return cl, owner, name, nil
}

// Create makes a check run on run.HeadSHA of repoURL and returns its id.
func (c Checks) Create(ctx context.Context, repoURL string, run CheckRun) (int64, error) {
	if run.Name == "" || run.HeadSHA == "" {
		return 0, errors.New("a check run needs a name and a commit")
	}
	cl, owner, name, err := c.client(ctx, repoURL)
	if err != nil {
		return 0, err
	}
	opts := github.CreateCheckRunOptions{
		Name:       run.Name,
		HeadSHA:    run.HeadSHA,
		DetailsURL: optString(run.DetailsURL),
		ExternalID: optString(run.ExternalID),
		Output:     run.output(),
	}
	opts.Status, opts.Conclusion = run.state()
	if opts.Conclusion != nil {
		opts.CompletedAt = &github.Timestamp{Time: time.Now()}
	}
	cr, _, err := cl.Checks.CreateCheckRun(ctx, owner, name, opts)
	if err != nil {
		return 0, fmt.Errorf("create check run %q on %s/%s@%s: %w", run.Name, owner, name, run.HeadSHA, err)
	}
	return cr.GetID(), nil
}

// Update changes check run id of repoURL: its status or conclusion, output
// and link (its commit stays). run.Name is needed: the client always sends
// one.
func (c Checks) Update(ctx context.Context, repoURL string, id int64, run CheckRun) error {
	if run.Name == "" {
		return errors.New("a check run's update needs its name")
	}
	cl, owner, name, err := c.client(ctx, repoURL)
	if err != nil {
		return err
	}
	opts := github.UpdateCheckRunOptions{
		Name:       run.Name,
		DetailsURL: optString(run.DetailsURL),
		ExternalID: optString(run.ExternalID),
		Output:     run.output(),
	}
	opts.Status, opts.Conclusion = run.state()
	if opts.Conclusion != nil {
		opts.CompletedAt = &github.Timestamp{Time: time.Now()}
	}
	if _, _, err := cl.Checks.UpdateCheckRun(ctx, owner, name, id, opts); err != nil {
		return fmt.Errorf("update check run %d on %s/%s: %w", id, owner, name, err)
	}
	return nil
}

// ForCommit lists the check runs on ref of repoURL, only those named name
// when it is not empty (the latest of each name, as GitHub filters them).
func (c Checks) ForCommit(ctx context.Context, repoURL, ref, name string) ([]CheckRunState, error) {
	cl, owner, repo, err := c.client(ctx, repoURL)
	if err != nil {
		return nil, err
	}
	opts := &github.ListCheckRunsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	if name != "" {
		opts.CheckName = github.String(name)
	}
	var out []CheckRunState
	for range maxListPages {
		res, resp, err := cl.Checks.ListCheckRunsForRef(ctx, owner, repo, ref, opts)
		if err != nil {
			return nil, fmt.Errorf("list the check runs of %s/%s@%s: %w", owner, repo, ref, err)
		}
		for _, cr := range res.CheckRuns {
			out = append(out, CheckRunState{
				ID: cr.GetID(), Name: cr.GetName(), HeadSHA: cr.GetHeadSHA(),
				Status: cr.GetStatus(), Conclusion: cr.GetConclusion(),
				Title: cr.GetOutput().GetTitle(), Summary: cr.GetOutput().GetSummary(),
				DetailsURL: cr.GetDetailsURL(), ExternalID: cr.GetExternalID(), HTMLURL: cr.GetHTMLURL(),
			})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// Upsert updates the latest check run named run.Name on run.HeadSHA, or
// creates one: a check said again replaces what it said (a re-delivered
// event, a second look at the same commit) instead of adding a twin.
func (c Checks) Upsert(ctx context.Context, repoURL string, run CheckRun) (int64, error) {
	have, err := c.ForCommit(ctx, repoURL, run.HeadSHA, run.Name)
	if err != nil {
		return 0, err
	}
	for _, h := range have {
		if h.Name == run.Name {
			return h.ID, c.Update(ctx, repoURL, h.ID, run)
		}
	}
	return c.Create(ctx, repoURL, run)
}

// state is the status and conclusion to send.
func (r CheckRun) state() (status, conclusion *string) {
	switch {
	case r.Conclusion != "":
		return github.String("completed"), github.String(r.Conclusion)
	case r.Status != "":
		return github.String(r.Status), nil
	}
	return nil, nil
}

// output is the run's output, nil when it has none.
func (r CheckRun) output() *github.CheckRunOutput {
	if r.Title == "" && r.Summary == "" && r.Text == "" {
		return nil
	}
	title := r.Title
	if title == "" {
		title = r.Name
	}
	o := &github.CheckRunOutput{Title: github.String(title), Summary: github.String(cutOutput(r.Summary))}
	if r.Text != "" {
		o.Text = github.String(cutOutput(r.Text))
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
	return github.String(s)
}

// checkRun is c as a check run.
func checkRun(c forge.Check) CheckRun {
	return CheckRun{Name: c.Name, HeadSHA: c.Commit, Status: c.Status, Conclusion: c.Conclusion, Title: c.Title, Summary: c.Summary, Text: c.Text, DetailsURL: c.DetailsURL, ExternalID: c.ExternalID}
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
	run := checkRun(c)
	opts := github.CreateCheckRunOptions{
		Name: run.Name, HeadSHA: run.HeadSHA, DetailsURL: optString(run.DetailsURL), ExternalID: optString(run.ExternalID), Output: run.output(),
	}
	opts.Status, opts.Conclusion = run.state()
	if opts.Conclusion != nil {
		opts.CompletedAt = &github.Timestamp{Time: time.Now()}
	}
	cr, _, err := cl.Checks.CreateCheckRun(ctx, owner, name, opts)
	if err != nil {
		return 0, fmt.Errorf("create check run %q on %s/%s@%s: %w", run.Name, owner, name, run.HeadSHA, err)
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
	run := checkRun(c)
	opts := github.UpdateCheckRunOptions{Name: run.Name, DetailsURL: optString(run.DetailsURL), ExternalID: optString(run.ExternalID), Output: run.output()}
	opts.Status, opts.Conclusion = run.state()
	if opts.Conclusion != nil {
		opts.CompletedAt = &github.Timestamp{Time: time.Now()}
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
	opts := &github.ListCheckRunsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	if name != "" {
		opts.CheckName = github.String(name)
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
