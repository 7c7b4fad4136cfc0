// Package revert opens revert pull requests: when triage blamed a commit
// with confidence, the commit is recent, and the repair produced nothing
// that passed the gates (or the repository asks for a revert before any
// repair on some paths), the commit is reverted with `git revert` on the
// default branch's head, the failing tests are run at the revert, and the
// revert is published as a pull request. One revert per culprit, ever; a
// revert and a fix of one failure group are never both open.
package revert

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

// Policy is when a culprit may be reverted.
type Policy struct {
	Enabled bool
	// MaxAge is the oldest culprit reverted, by its committer time.
	MaxAge time.Duration
	// MinConfidence is the least confidence of the bisection in it.
	MinConfidence float64
	// FirstPaths are globs: a culprit touching a file they match is
	// reverted before any repair is tried.
	FirstPaths []string
	// PathAllowed, when set, is the repository's rule for the files redfix
	// may change: a revert touching one it refuses is refused.
	PathAllowed func(file string) (bool, string)
}

// NewPolicy is the policy from its values: the central configuration's
// revert section, narrowed by a repository's own when it has one.
func NewPolicy(enabled bool, maxAge time.Duration, minConfidence float64, firstPaths []string) Policy {
	return Policy{Enabled: enabled, MaxAge: maxAge, MinConfidence: minConfidence, FirstPaths: firstPaths}
}

// Repo is a repository's own revert policy (its .redfix.yaml's revert
// section, already held within the central configuration's).
type Repo struct {
	Enabled bool
	// MaxAge: 0 keeps the central bound.
	MaxAge     time.Duration
	FirstPaths []string
	// PathAllowed, when set, says whether redfix may change a file of the
	// repository (its .redfix.yaml paths), and the rule that refuses it:
	// a revert is a change like any other.
	PathAllowed func(file string) (bool, string)
}

// Narrowed is p narrowed by a repository's own policy: off when either is,
// the younger of the two ages, and the repository's revert-first paths (the
// central configuration has none). A nil repo is p.
func (p Policy) Narrowed(repo *Repo) Policy {
	if repo == nil {
		return p
	}
	out := p
	out.Enabled = p.Enabled && repo.Enabled
	if repo.MaxAge > 0 && (p.MaxAge <= 0 || repo.MaxAge < p.MaxAge) {
		out.MaxAge = repo.MaxAge
	}
	out.FirstPaths = repo.FirstPaths
	out.PathAllowed = repo.PathAllowed
	return out
}

// Cause is what asks for a revert.
type Cause int

const (
	// NoPatch: the repair produced nothing that passed the gates.
	NoPatch Cause = iota
	// FirstPaths: the culprit touches a path the policy reverts first.
	FirstPaths
	// Asked: a person with write access asked for it (/redfix revert).
	Asked
)

func (c Cause) String() string {
	switch c {
	case NoPatch:
		return "the repair produced nothing that passed the gates"
	case FirstPaths:
		return "the culprit touches a path the repository reverts before any repair"
	case Asked:
		return "a person with write access asked for it"
	}
	return "unknown"
}

// Culprit is what git says of the blamed commit.
type Culprit struct {
	SHA       string
	Parents   int
	Committed time.Time
	Files     []string
}

// Decide says whether t's culprit may be reverted for cause at now, and
// if not, why. A person's request skips the confidence and the age (they
// know the commit), never the safety rules (a merge commit is never
// reverted). The rules on the default branch (the revert applies, no later
// commit builds on the culprit, the tests pass at it) are checked on git.
func (p Policy) Decide(t task.Task, c Culprit, now time.Time, cause Cause) (bool, string) {
	bis := t.Bisection
	switch {
	case !p.Enabled:
		return false, "reverts are turned off"
	case bis.Blame == "":
		return false, "triage blamed no commit"
	case c.Parents > 1:
		return false, fmt.Sprintf("%s is a merge commit", task.Short(c.SHA))
	case c.Parents == 0:
		return false, fmt.Sprintf("%s is a root commit", task.Short(c.SHA))
	}
	if cause == Asked {
		return true, ""
	}
	if bis.Confidence < p.MinConfidence {
		return false, fmt.Sprintf("triage's confidence in %s is %.3f, under %.3f", task.Short(c.SHA), bis.Confidence, p.MinConfidence)
	}
	if age := now.Sub(c.Committed); age > p.MaxAge {
		return false, fmt.Sprintf("%s was committed %s ago, more than %s", task.Short(c.SHA), age.Round(time.Minute), p.MaxAge)
	}
	if cause == FirstPaths && p.firstPath(c.Files) == "" {
		return false, "the culprit touches no path the repository reverts first"
	}
	return true, ""
}

// firstPath is the first of files that FirstPaths match, "" if none.
// A glob matches a path (path.Match), or a directory prefix when it ends
// with "/**".
func (p Policy) firstPath(files []string) string {
	for _, f := range files {
		for _, g := range p.FirstPaths {
			if dir, ok := strings.CutSuffix(g, "/**"); ok && strings.HasPrefix(f, dir+"/") {
				return f
			}
			if ok, _ := path.Match(g, f); ok {
				return f
			}
		}
	}
	return ""
}
