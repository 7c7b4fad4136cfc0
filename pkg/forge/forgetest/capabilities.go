package forgetest

import (
	"context"

	"github.com/redfix/redfix/pkg/forge"
)

// Credentials let git reach a repository (publishing, revisions).
type Credentials interface {
	Credentials(ctx context.Context, repo forge.RepoID) (forge.Credentials, error)
}

// ChangeRequests are what publishing, the commands and the keeper do with
// change requests.
type ChangeRequests interface {
	Repository(ctx context.Context, repo forge.RepoID) (forge.Repository, error)
	FindChangeRequest(ctx context.Context, repo forge.RepoID, head string, open bool) (*forge.ChangeRequest, error)
	OpenChangeRequest(ctx context.Context, repo forge.RepoID, n forge.NewChangeRequest) (forge.ChangeRequest, error)
	ChangeRequest(ctx context.Context, repo forge.RepoID, number int) (forge.ChangeRequest, error)
	CloseChangeRequest(ctx context.Context, repo forge.RepoID, number int) error
	OpenChangeRequests(ctx context.Context, repo forge.RepoID, l forge.Listing) ([]forge.ChangeRequest, error)
	ChangedFiles(ctx context.Context, repo forge.RepoID, number int) ([]string, error)
	AddLabel(ctx context.Context, repo forge.RepoID, number int, label string) error
	DeleteBranch(ctx context.Context, repo forge.RepoID, branch string) error
}

// Links are the web pages a change request's description links to.
type Links interface {
	CommitURL(r forge.Repository, sha string) string
	TreeURL(r forge.Repository, commit string) string
	FileURL(r forge.Repository, commit, path string, line int) string
	CodeOwnersFiles() []string
}

// Reviews ask people for a review, among them the culprit's author.
type Reviews interface {
	RequestReviews(ctx context.Context, repo forge.RepoID, number int, reviewers []string) error
	CommitAuthor(ctx context.Context, repo forge.RepoID, sha string) (forge.User, error)
}

// Commands answer people in a change request's thread, after reading
// whether they may write.
type Commands interface {
	Comment(ctx context.Context, repo forge.RepoID, number int, body string) (string, error)
	Acknowledge(ctx context.Context, c forge.Comment) error
	Permission(ctx context.Context, repo forge.RepoID, user string) (forge.Permission, error)
}

// Checks are redfix's verdicts on commits.
type Checks interface {
	CommitChecks(ctx context.Context, repo forge.RepoID, commit, name string) ([]forge.CheckState, error)
	CreateCheck(ctx context.Context, repo forge.RepoID, c forge.Check) (int64, error)
	UpdateCheck(ctx context.Context, repo forge.RepoID, id int64, c forge.Check) error
}
