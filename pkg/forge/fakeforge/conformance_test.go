package fakeforge_test

import (
	"testing"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/fakeforge"
	"github.com/redfix/redfix/pkg/forge/forgetest"
)

// TestConformance: the forge that exists only in the tests passes the
// suite every forge driver passes, with paths of nested groups.
func TestConformance(t *testing.T) {
	forgetest.Run(t, &backend{f: fakeforge.New(t.TempDir())})
}

// backend is the fake forge as the suite's forge.
type backend struct{ f *fakeforge.Forge }

func (b *backend) Driver() forge.Driver { return b.f }

func (b *backend) CreateRepo(t testing.TB, name, dir string) string {
	url, err := b.f.CreateRepo("group/subgroup/"+name, dir)
	if err != nil {
		t.Fatal(err)
	}
	return url
}

func (b *backend) AddUser(t testing.TB, repo forge.RepoID, login, email string, write bool) {
	b.f.AddUser(repo.Path, login, email, write)
}

func (b *backend) Comment(t testing.TB, repo forge.RepoID, number int, login, body string) forge.Comment {
	c, err := b.f.Say(repo, number, login, body)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (b *backend) Comments(t testing.TB, repo forge.RepoID, number int) []string {
	bodies, _, err := b.f.Thread(repo, number)
	if err != nil {
		t.Fatal(err)
	}
	return bodies
}

func (b *backend) Acknowledged(t testing.TB, c forge.Comment) bool {
	bodies, acked, err := b.f.Thread(c.Repo, c.Number)
	if err != nil {
		t.Fatal(err)
	}
	for i := range bodies {
		if bodies[i] == c.Body && acked[i] {
			return true
		}
	}
	return false
}

func (b *backend) Labels(t testing.TB, repo forge.RepoID, number int) []string {
	labels, _, err := b.f.Labels(repo, number)
	if err != nil {
		t.Fatal(err)
	}
	return labels
}

func (b *backend) Reviewers(t testing.TB, repo forge.RepoID, number int) []string {
	_, reviewers, err := b.f.Labels(repo, number)
	if err != nil {
		t.Fatal(err)
	}
	return reviewers
}
