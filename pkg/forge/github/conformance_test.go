package github_test

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/forgetest"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
)

// TestConformance runs the forge drivers' suite against the test GitHub,
// with the driver authenticated as an App installed on each repository.
func TestConformance(t *testing.T) {
	forgetest.Run(t, newBackend(t))
}

// backend is the test GitHub as the suite's forge.
type backend struct {
	srv *ghtest.Server
	app *ghtest.App
	d   *github.Forge
}

func newBackend(t *testing.T) *backend {
	srv := ghtest.New(t)
	app := srv.NewApp("redfix")
	c, err := github.New(github.Config{APIURL: srv.APIURL(), AppID: app.ID, PrivateKeyFile: app.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	return &backend{srv: srv, app: app, d: github.NewForge(c)}
}

func (b *backend) Driver() forge.Driver { return b.d }

func (b *backend) CreateRepo(t testing.TB, name, dir string) string {
	b.srv.CreateRepo("acme", name, dir)
	b.srv.Install("acme", "acme/"+name)
	return b.srv.CloneURL("acme", name)
}

func ownerName(repo forge.RepoID) (string, string) {
	owner, name, _ := strings.Cut(repo.Path, "/")
	return owner, name
}

func (b *backend) AddUser(t testing.TB, repo forge.RepoID, login, email string, write bool) {
	b.srv.AddUser(login, email)
	owner, name := ownerName(repo)
	role := "read"
	if write {
		role = "write"
	}
	b.srv.SetRole(owner, name, login, role)
}

func (b *backend) Comment(t testing.TB, repo forge.RepoID, number int, login, body string) forge.Comment {
	owner, name := ownerName(repo)
	c := b.srv.AddComment(owner, name, number, login, body)
	return forge.Comment{Repo: b.d.Repo(owner + "/" + name), Number: number, OnChangeRequest: true, ID: c.ID, Author: forge.User{Login: login}, Body: body}
}

func (b *backend) Comments(t testing.TB, repo forge.RepoID, number int) []string {
	owner, name := ownerName(repo)
	var out []string
	for _, c := range b.srv.Comments(owner, name, number) {
		out = append(out, c.Body)
	}
	return out
}

func (b *backend) Acknowledged(t testing.TB, c forge.Comment) bool {
	owner, name := ownerName(c.Repo)
	for _, x := range b.srv.Comments(owner, name, c.Number) {
		if x.ID == c.ID {
			return len(x.Reactions) > 0
		}
	}
	return false
}

// pull is a copy of pull request number.
func (b *backend) pull(t testing.TB, repo forge.RepoID, number int) ghtest.Pull {
	owner, name := ownerName(repo)
	b.srv.Lock()
	defer b.srv.Unlock()
	r, ok := b.srv.Repo(owner, name)
	if !ok {
		t.Fatalf("no repository %s", repo)
	}
	for _, p := range r.Pulls {
		if p.Number == number {
			return *p
		}
	}
	t.Fatalf("no pull request %d in %s", number, repo)
	return ghtest.Pull{}
}

func (b *backend) Labels(t testing.TB, repo forge.RepoID, number int) []string {
	return b.pull(t, repo, number).Labels
}

func (b *backend) Reviewers(t testing.TB, repo forge.RepoID, number int) []string {
	return b.pull(t, repo, number).Reviewers
}
