package event

import (
	"fmt"
	"path"
	"slices"
	"strings"

	gogithub "github.com/google/go-github/v62/github"
)

// Repository is what redfix is told about one repository.
type Repository struct {
	// Name is "owner/name"; "owner/*" matches an owner's repositories.
	Name string `yaml:"name"`
	// Branches whose red runs are repaired; the repository's default branch
	// when empty.
	Branches []string `yaml:"branches"`
	// Artifacts are globs over artifact names to take test reports from;
	// every artifact of the run when empty.
	Artifacts []string `yaml:"artifacts"`
	// PullRequests repairs runs on pull-request branches too (off by
	// default: their authors are working on them).
	PullRequests bool `yaml:"pull_requests"`
}

// Filter decides which repositories and runs redfix acts on.
type Filter struct {
	// Allow, when not empty, narrows the repositories that verified
	// webhooks may bring in. With it empty, every repository whose webhook
	// is signed with the secret is allowed.
	Allow []string
	// Repositories hold per-repository settings; the first match wins.
	Repositories []Repository
}

// Allowed reports whether repo ("owner/name") may be acted on.
func (f Filter) Allowed(repo string) bool {
	if len(f.Allow) == 0 {
		return true
	}
	return slices.ContainsFunc(f.Allow, func(p string) bool { return matchRepo(p, repo) })
}

// Names are the repositories the filter names, as written: the
// allowlist's, then the per-repository settings' (patterns such as
// "owner/*" and repeats included).
func (f Filter) Names() []string {
	names := append([]string(nil), f.Allow...)
	for _, r := range f.Repositories {
		names = append(names, r.Name)
	}
	return names
}

// Settings are the settings for repo: its entry, or the zero Repository.
func (f Filter) Settings(repo string) Repository {
	for _, r := range f.Repositories {
		if matchRepo(r.Name, repo) {
			return r
		}
	}
	return Repository{Name: repo}
}

func matchRepo(pattern, repo string) bool {
	pattern, repo = strings.ToLower(strings.TrimSpace(pattern)), strings.ToLower(repo)
	if pattern == repo {
		return true
	}
	ok, err := path.Match(pattern, repo)
	return err == nil && ok
}

// Skip says why a workflow run is not repaired, or "" when it is.
func (f Filter) Skip(repo *gogithub.Repository, run *gogithub.WorkflowRun) string {
	full := repo.GetFullName()
	switch {
	case run == nil:
		return "no workflow_run in the payload"
	case !f.Allowed(full):
		return fmt.Sprintf("repository %s is not in the allowlist", full)
	case run.GetStatus() != "completed":
		return fmt.Sprintf("run is %s, not completed", run.GetStatus())
	case run.GetConclusion() != "failure":
		return fmt.Sprintf("run concluded %q, not failure", run.GetConclusion())
	}
	set := f.Settings(full)
	if !set.PullRequests && onPullRequest(run) {
		return fmt.Sprintf("run on a pull-request branch (%s, event %s)", run.GetHeadBranch(), run.GetEvent())
	}
	branches := set.Branches
	if len(branches) == 0 {
		branches = []string{repo.GetDefaultBranch()}
	}
	if !slices.ContainsFunc(branches, func(b string) bool {
		ok, err := path.Match(b, run.GetHeadBranch())
		return b == run.GetHeadBranch() || err == nil && ok
	}) {
		return fmt.Sprintf("branch %q is not one of %s", run.GetHeadBranch(), strings.Join(branches, ", "))
	}
	return ""
}

// onPullRequest reports whether run tested a pull request's branch: it was
// triggered by a pull-request event, or its branch is an open pull
// request's head.
func onPullRequest(run *gogithub.WorkflowRun) bool {
	if strings.HasPrefix(run.GetEvent(), "pull_request") {
		return true
	}
	return slices.ContainsFunc(run.PullRequests, func(pr *gogithub.PullRequest) bool {
		return pr.GetHead().GetRef() == run.GetHeadBranch()
	})
}
