package forge

import "context"

// The statuses of a check on a commit.
const (
	CheckQueued     = "queued"
	CheckInProgress = "in_progress"
	CheckCompleted  = "completed"
)

// The conclusions of a completed check that redfix gives.
const (
	ConclusionSuccess        = "success"
	ConclusionFailure        = "failure"
	ConclusionNeutral        = "neutral"
	ConclusionActionRequired = "action_required"
	ConclusionSkipped        = "skipped"
)

// Check is what redfix says on a commit, where the forge shows its CI: a
// name, and either a status still going or a conclusion.
type Check struct {
	// Name is the check's name as the commit shows it ("redfix / triage").
	Name string
	// Commit is needed to create a check; an update keeps its commit.
	Commit string
	// Status is CheckQueued, CheckInProgress or CheckCompleted; empty with
	// a Conclusion means completed, empty without one means queued.
	Status string
	// Conclusion, when set, completes the check.
	Conclusion string
	// Title and Summary are its heading and Markdown body; Text an
	// optional longer Markdown part. A check with a Summary needs a Title
	// (Name is used when it is empty).
	Title, Summary, Text string
	// DetailsURL links to more (a change request, the dashboard).
	DetailsURL string
	// ExternalID is redfix's own reference (the tasks it shows).
	ExternalID string
}

// CheckState is a check as the forge holds it.
type CheckState struct {
	ID                 int64
	Name, Commit       string
	Status, Conclusion string
	Title, Summary     string
	DetailsURL         string
	ExternalID         string
	// URL is the check's own page.
	URL string
}

// CheckWriter writes checks on a repository's commits.
type CheckWriter interface {
	CommitChecks(ctx context.Context, repo RepoID, commit, name string) ([]CheckState, error)
	CreateCheck(ctx context.Context, repo RepoID, c Check) (int64, error)
	UpdateCheck(ctx context.Context, repo RepoID, id int64, c Check) error
}

// UpsertCheck updates the latest check named c.Name on c.Commit, or
// creates one: a check said again replaces what it said (a redelivered
// event, a second look at the same commit) instead of adding a twin.
func UpsertCheck(ctx context.Context, w CheckWriter, repo RepoID, c Check) (int64, error) {
	have, err := w.CommitChecks(ctx, repo, c.Commit, c.Name)
	if err != nil {
		return 0, err
	}
	for _, h := range have {
		if h.Name == c.Name {
			return h.ID, w.UpdateCheck(ctx, repo, h.ID, c)
		}
	}
	return w.CreateCheck(ctx, repo, c)
}
