package repoconfig

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/testenv"
)

// Central is what the central configuration allows one repository: the
// ceiling a .redfix.yaml can only lower.
type Central struct {
	// Enabled is false when the central configuration leaves the
	// repository alone (triage.opt_out).
	Enabled bool
	// Driver is the language driver the central configuration names for
	// the repository ("" leaves it to detection).
	Driver string
	// Tests are the central test settings of the repository; TestsLocked
	// holds a file's tests: section to them (a repository cannot name its
	// own), else the file's settings are laid on them (testenv.Merge).
	Tests       testenv.Settings
	TestsLocked bool
	// RepairsPerDay and OpenPullRequests are the central limits (0: none).
	RepairsPerDay    int
	OpenPullRequests int
	// Forks: pull requests from forks are handled.
	Forks bool
	// Revert is the central revert policy.
	Revert RevertPolicy
}

// RevertPolicy is when a culprit gets a revert pull request.
type RevertPolicy struct {
	Enabled bool
	// MaxAge: a culprit older than this is not reverted (0: no bound).
	MaxAge time.Duration
	// FirstPaths: a culprit touching these gets a revert before any repair.
	FirstPaths []string
}

// Policy is the central configuration narrowed by a repository's file: what
// redfix may do on the repository at one commit.
type Policy struct {
	Enabled bool
	// Allow and Deny are the repository's own globs: a path must match an
	// Allow glob (when there are any) and no Deny glob. The central
	// allowed paths are enforced by the gates on their own, so both hold.
	Allow, Deny []string
	// Driver overrides detection ("" detects).
	Driver string
	// Tests are what every run of the repository's tests needs.
	Tests     testenv.Settings
	Reviewers []string
	Labels    []string
	// RepairsPerDay and OpenPullRequests are the limits (0: none).
	RepairsPerDay    int
	OpenPullRequests int
	Forks            bool
	Revert           RevertPolicy
	// Source says where the policy came from: "central configuration", or
	// ".redfix.yaml at <commit>".
	Source string
	// Held lists each key of the file that tried to widen the central
	// configuration and was held to the central value, with why.
	Held []string
}

// FromCentral is the policy with no file: the central configuration.
func FromCentral(c Central) Policy {
	return Policy{
		Enabled: c.Enabled, Driver: c.Driver, RepairsPerDay: c.RepairsPerDay, OpenPullRequests: c.OpenPullRequests,
		Forks: c.Forks, Tests: c.Tests, Revert: RevertPolicy{Enabled: c.Revert.Enabled, MaxAge: c.Revert.MaxAge, FirstPaths: slices.Clone(c.Revert.FirstPaths)},
		Source: "central configuration",
	}
}

// Narrow applies f to the central configuration. It never widens: a key
// that asks for more than central allows keeps the central value and is
// named in Policy.Held.
func Narrow(c Central, f File, commit string) Policy {
	p := FromCentral(c)
	p.Source = FileName + " at " + commit
	held := func(key, format string, args ...any) {
		p.Held = append(p.Held, key+": "+fmt.Sprintf(format, args...))
	}
	if f.Enabled != nil {
		switch {
		case !*f.Enabled:
			p.Enabled = false
		case !c.Enabled:
			held("enabled", "true is held to the central configuration, which leaves this repository alone")
		}
	}
	if f.Paths != nil {
		p.Allow = slices.Clone(f.Paths.Allow)
		p.Deny = slices.Clone(f.Paths.Deny)
	}
	if f.Languages != nil {
		if d := f.Languages.Driver; d != "" {
			if c.Driver != "" && c.Driver != d {
				held("languages.driver", "%q is held to %q, which the central configuration names for this repository", d, c.Driver)
			} else {
				p.Driver = d
			}
		}
		if f.Languages.TestCommand != "" {
			held("languages.test_command", "ignored: redfix runs the language's test runner itself, to read its report; tests.args adds options to it")
		}
	}
	if f.Tests != nil {
		if c.TestsLocked {
			held("tests", "ignored: the central configuration sets this repository's test settings and does not let it name its own")
		} else {
			p.Tests = c.Tests.Merge(*f.Tests)
		}
	}
	p.Reviewers = slices.Clone(f.Reviewers)
	p.Labels = slices.Clone(f.Labels)
	if f.Limits != nil {
		p.RepairsPerDay = lower(c.RepairsPerDay, f.Limits.RepairsPerDay, "limits.repairs_per_day", held)
		p.OpenPullRequests = lower(c.OpenPullRequests, f.Limits.OpenPullRequests, "limits.open_pull_requests", held)
	}
	if f.Forks != nil {
		switch {
		case !*f.Forks:
			p.Forks = false
		case !c.Forks:
			held("forks", "true is held to the central configuration, which does not handle pull requests from forks")
		}
	}
	if r := f.Revert; r != nil {
		if r.Enabled != nil {
			switch {
			case !*r.Enabled:
				p.Revert.Enabled = false
			case !c.Revert.Enabled:
				held("revert.enabled", "true is held to the central configuration, which turns reverts off")
			}
		}
		if r.MaxAge != nil {
			age := time.Duration(*r.MaxAge)
			if c.Revert.MaxAge > 0 && age > c.Revert.MaxAge {
				held("revert.max_age", "%s is held to the central %s", age, c.Revert.MaxAge)
			} else {
				p.Revert.MaxAge = age
			}
		}
		if len(r.FirstPaths) > 0 {
			if p.Revert.Enabled {
				p.Revert.FirstPaths = append(p.Revert.FirstPaths, r.FirstPaths...)
			} else {
				held("revert.first_paths", "ignored: reverts are off")
			}
		}
	}
	return p
}

// lower is the smaller of the central limit (0: none) and the file's.
func lower(central int, file *int, key string, held func(key, format string, args ...any)) int {
	if file == nil {
		return central
	}
	if central > 0 && *file > central {
		held(key, "%d is held to the central %d", *file, central)
		return central
	}
	return *file
}

// PathAllowed says whether the repository lets redfix change p (a path in
// the repository, slash-separated), and otherwise which rule refuses it.
func (p Policy) PathAllowed(file string) (ok bool, rule string) {
	file = strings.TrimPrefix(path.Clean("/"+file), "/")
	for _, g := range p.Deny {
		if Match(g, file) {
			return false, fmt.Sprintf("%s paths.deny %q", FileName, g)
		}
	}
	if len(p.Allow) == 0 {
		return true, ""
	}
	for _, g := range p.Allow {
		if Match(g, file) {
			return true, ""
		}
	}
	return false, fmt.Sprintf("%s paths.allow (%s) names no glob it matches", FileName, strings.Join(quoteAll(p.Allow), ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// Match matches a slash-separated path against a glob: path.Match for each
// segment, "**" for any number of segments, and a glob that ends at a
// directory covers everything below it ("docs" covers "docs/a.md").
func Match(glob, file string) bool {
	return matchSegs(strings.Split(strings.Trim(glob, "/"), "/"), strings.Split(file, "/"))
}

func matchSegs(pat, segs []string) bool {
	if len(pat) == 0 {
		return true
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegs(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
		return false
	}
	return matchSegs(pat[1:], segs[1:])
}
