package forge

import (
	"regexp"
	"time"
)

// State is where a change request stands.
type State string

// The states of a change request.
const (
	StateOpen   State = "open"
	StateClosed State = "closed" // closed without being merged
	StateMerged State = "merged"
)

// ChangeRequest is a proposed change on a forge: GitHub's pull request,
// GitLab's merge request.
type ChangeRequest struct {
	Repo   RepoID
	Number int
	// URL is its web page, where people read it.
	URL         string
	Title, Body string
	State       State
	// Head is the branch with the change and HeadSHA its commit; Base is
	// the branch it would change.
	Head, HeadSHA, Base string
	Author              User
	// Commits is how many commits the change holds (0 when the forge did
	// not say).
	Commits int
	// UpdatedAt is when it last changed; ClosedAt when it was merged or
	// closed (zero while open).
	UpdatedAt, ClosedAt time.Time
}

// NewChangeRequest is a change request to open.
type NewChangeRequest struct {
	Title, Body string
	// Head is the branch pushed with the change, Base the branch to change.
	Head, Base string
	// Draft opens it as not ready to merge (where the forge has drafts).
	Draft bool
}

// Listing narrows a listing of a repository's open change requests.
type Listing struct {
	// HeadPrefix keeps only those whose head branch starts with it.
	HeadPrefix string
	// Limit is how many to return at most; 0 is all (as far as the
	// driver pages).
	Limit int
	// RecentlyUpdated orders them by their last update, newest first;
	// otherwise the newest opened come first.
	RecentlyUpdated bool
}

// User is an account on a forge.
type User struct {
	Login string
	// Bot is set for an account that is a program (an App's, a bot
	// user), whose words redfix never acts on.
	Bot bool
}

// Permission is what a user may do on a repository, as the forge answers
// it (never as a comment claims it).
type Permission struct {
	// Level and Role are the forge's own words, for logs.
	Level, Role string
	// Write reports whether the user may push to the repository: the
	// permission redfix asks of whoever gives it a command.
	Write bool
}

// Repository is what a forge says of a repository.
type Repository struct {
	ID RepoID
	// WebURL is its page, without a trailing "/".
	WebURL        string
	DefaultBranch string
}

// Credentials let git push to a repository: the environment of one git
// command (never written to disk), and the secret values in it, hidden
// from everything redfix writes where people read.
type Credentials struct {
	Env     []string
	Secrets []string
	// Shapes, when set, matches the forge's tokens, hidden wherever they
	// appear (a token of the forge that is not the one in Env included).
	Shapes *regexp.Regexp
}

// BranchPrefix starts the head branch of every change request redfix
// opens: how its own are told from people's.
const BranchPrefix = "redfix/"
