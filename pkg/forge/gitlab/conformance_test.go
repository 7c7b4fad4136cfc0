package gitlab_test

import (
	"testing"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/forgetest"
	"github.com/redfix/redfix/pkg/forge/gitlab"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
)

// botToken is redfix's token on the test GitLab.
const botToken = "glpat-conformance0123456789abcdef"

// TestConformance runs the forge drivers' suite against the test GitLab,
// the driver acting with a token of an account that is a Developer of the
// group that holds every project, each project in a subgroup.
func TestConformance(t *testing.T) {
	forgetest.Run(t, newBackend(t))
}

// backend is the test GitLab as the suite's forge.
type backend struct {
	srv *gltest.Server
	d   *gitlab.Forge
}

func newBackend(t *testing.T) *backend {
	srv := gltest.New(t)
	bot := srv.AddUser("redfix-bot", "redfix@example.com", botToken)
	srv.AddGroupMember("acme", bot, gltest.Developer)
	d, err := gitlab.New(gitlab.Config{URL: srv.URL, Token: botToken})
	if err != nil {
		t.Fatal(err)
	}
	return &backend{srv: srv, d: d}
}

func (b *backend) Driver() forge.Driver { return b.d }

func (b *backend) CreateRepo(t testing.TB, name, dir string) string {
	path := "acme/platform/" + name
	b.srv.CreateProject(path, dir)
	return b.srv.CloneURL(path)
}

// path is repo's project path on the test GitLab.
func path(repo forge.RepoID) string { return repo.Path }

func (b *backend) AddUser(t testing.TB, repo forge.RepoID, login, email string, write bool) {
	u := b.srv.UserNamed(login)
	if u == nil {
		u = b.srv.AddUser(login, email, "")
	}
	level := gltest.Reporter
	if write {
		level = gltest.Developer
	}
	b.srv.AddMember(path(repo), u, level)
}

func (b *backend) Comment(t testing.TB, repo forge.RepoID, number int, login, body string) forge.Comment {
	u := b.srv.UserNamed(login)
	n := b.srv.AddNote(path(repo), int64(number), u, body)
	return forge.Comment{Repo: repo, Number: number, OnChangeRequest: true, ID: n.ID, Author: gitlab.UserOf(login), Body: body}
}

// mr is a copy of merge request number.
func (b *backend) mr(t testing.TB, repo forge.RepoID, number int) gltest.MergeRequest {
	b.srv.Lock()
	defer b.srv.Unlock()
	mr := b.srv.MR(path(repo), int64(number))
	if mr == nil {
		t.Fatalf("no merge request !%d in %s", number, repo)
	}
	return *mr
}

func (b *backend) Comments(t testing.TB, repo forge.RepoID, number int) []string {
	var out []string
	for _, n := range b.mr(t, repo, number).Notes {
		out = append(out, n.Body)
	}
	return out
}

func (b *backend) Acknowledged(t testing.TB, c forge.Comment) bool {
	for _, n := range b.mr(t, c.Repo, c.Number).Notes {
		if n.ID == c.ID {
			return len(n.Awards) > 0
		}
	}
	return false
}

func (b *backend) Labels(t testing.TB, repo forge.RepoID, number int) []string {
	return b.mr(t, repo, number).Labels
}

func (b *backend) Reviewers(t testing.TB, repo forge.RepoID, number int) []string {
	var out []string
	for _, id := range b.mr(t, repo, number).Reviewers {
		if u := b.srv.UserByID(id); u != nil {
			out = append(out, u.Username)
		}
	}
	return out
}
