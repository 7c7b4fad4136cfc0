// Package forge is the seam between redfix and the places repositories
// live: the vocabulary every forge driver speaks (a repository's identity,
// change requests, comments and reviews, checks on commits, the reports a
// forge's CI brings in) and the registry that chooses, for a repository,
// the driver that serves it.
//
// A driver is one package (the GitHub driver is pkg/forge/github) and one
// line in the wiring that registers it (pkg/app). Its client library's
// types never leave its package: what it does for redfix it does in this
// package's words. The core interface (Driver) only says which
// repositories a driver serves and reads its change requests' addresses;
// everything else a driver may do is a method a consumer asks for with a
// type assertion on an interface it declares itself (publishing declares
// what opening a change request takes, the commands what answering one
// takes), so that a forge that cannot do something (a plain git remote
// has no comments) simply lacks the method.
package forge

import (
	"errors"
)

// Driver is a forge redfix speaks to: GitHub, GitLab, a plain git remote.
type Driver interface {
	// Name is the driver's name, as the configuration and the reports
	// stream write it ("github").
	Name() string
	// Serves reports whether repo lives on this driver's forge, as it is
	// configured (its host, and a path the forge can hold).
	Serves(repo RepoID) bool
	// ChangeOf reads the repository and number of a change request from
	// its web address; ok is false for an address that is not one of
	// this forge's change requests.
	ChangeOf(url string) (repo RepoID, number int, ok bool)
}

// ErrNotServed is returned for a repository no configured forge serves.
var ErrNotServed = errors.New("no configured forge serves the repository")

// ErrUnsupported is returned when the repository's forge cannot do what is
// asked of it (its driver lacks the capability).
var ErrUnsupported = errors.New("the repository's forge cannot do this")

// ErrExists is returned by a driver asked to open a change request whose
// head branch already has one: the forge refused a second.
var ErrExists = errors.New("a change request from the branch exists")
