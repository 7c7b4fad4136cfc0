package github_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
)

func fullNames(repos []*gogithub.Repository) []string {
	var names []string
	for _, r := range repos {
		names = append(names, r.GetFullName())
	}
	return names
}

func TestRepositoriesOfTheAppAreItsInstallations(t *testing.T) {
	srv := ghtest.New(t)
	src := sampleRepo(t)
	for _, n := range []string{"acme/widgets", "acme/gears", "other/tools", "nobody/x"} {
		owner, name, _ := strings.Cut(n, "/")
		srv.CreateRepo(owner, name, src)
	}
	app := srv.NewApp("redfix-test")
	srv.Install("acme", "acme/widgets", "acme/gears")
	srv.Install("other", "other/tools")
	c, err := github.New(github.Config{APIURL: srv.APIURL(), AppID: app.ID, PrivateKeyFile: app.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	// The names are a token's; an App lists what it is installed on.
	repos, err := c.Repositories(context.Background(), []string{"nobody/x"})
	if err != nil {
		t.Fatal(err)
	}
	got := fullNames(repos)
	slices.Sort(got)
	if want := []string{"acme/gears", "acme/widgets", "other/tools"}; !slices.Equal(got, want) {
		t.Errorf("repositories %v, want %v", got, want)
	}
	if n := len(srv.CallsTo("GET", "/app/installations")); n != 1 {
		t.Errorf("%d listings of the installations, want 1", n)
	}
	if n := len(srv.CallsTo("GET", "/installation/repositories")); n != 2 {
		t.Errorf("%d listings of installation repositories, want 2 (one per installation)", n)
	}
}

func TestRepositoriesOfATokenAreTheNamedOnes(t *testing.T) {
	srv := ghtest.New(t)
	src := sampleRepo(t)
	srv.CreateRepo("acme", "widgets", src)
	srv.CreateRepo("acme", "gears", src)
	c := tokenClients(t, srv, nil)
	ctx := context.Background()
	repos, err := c.Repositories(ctx, []string{"acme/widgets", "ACME/Widgets", "acme/*", "no-slash", "acme/gears"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fullNames(repos), []string{"acme/widgets", "acme/gears"}; !slices.Equal(got, want) {
		t.Errorf("repositories %v, want %v (patterns and repeats skipped)", got, want)
	}
	if n := len(srv.CallsTo("GET", "/repos/{owner}/{repo}")); n != 2 {
		t.Errorf("%d repository fetches, want 2", n)
	}
	if _, err := c.Repositories(ctx, []string{"acme/missing"}); err == nil || !strings.Contains(err.Error(), "get repository acme/missing") {
		t.Errorf("a named repository that does not exist: %v", err)
	}
}

// TestRepositoriesAreOwnerAndName: a repository is GitHub's when it is on
// the configured host and its path is owner/name, whatever the URL's
// spelling; a longer path is no repository of GitHub's (its last two
// parts are not taken for one), nor is another host's.
func TestRepositoriesAreOwnerAndName(t *testing.T) {
	public, err := github.New(github.Config{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ghes, err := github.New(github.Config{Token: "t", APIURL: "https://ghe.example/api/v3/"})
	if err != nil {
		t.Fatal(err)
	}
	pub, ent := github.NewForge(public), github.NewForge(ghes)
	for in, d := range map[string]*github.Forge{
		"https://github.com/acme/widgets.git":   pub,
		"https://GitHub.com/acme/widgets":       pub,
		"git@github.com:acme/widgets.git":       pub,
		"ssh://git@github.com/acme/widgets.git": pub,
		"https://ghe.example/acme/widgets.git/": ent,
	} {
		id, err := forge.RepoOf(in)
		if err != nil || !d.Serves(id) || id.Path != "acme/widgets" {
			t.Errorf("%s: %+v, %v; want acme/widgets on %s", in, id, err, d.Host())
		}
	}
	for in, d := range map[string]*github.Forge{
		"https://ghe.example/prefix/acme/widgets.git": ent,
		"https://github.com/acme":                     pub,
		"https://github.com/acme/sub/widgets":         pub,
		"https://ghe.example/acme/widgets":            pub,
		"https://github.com/acme/widgets":             ent,
	} {
		if id, err := forge.RepoOf(in); err == nil && d.Serves(id) {
			t.Errorf("%s served by %s as %+v", in, d.Host(), id)
		}
	}
	for url, want := range map[string]int{
		"https://github.com/acme/shop/pull/12":    12,
		"https://github.com/acme/shop/pull/3/":    3,
		"file:///tmp/out/redfix-t1":               0,
		"https://github.com/acme/shop/issues/12":  0,
		"https://github.com/acme/shop/pull/0":     0,
		"https://github.com/shop/pull/1":          0,
		"https://github.com/a/acme/shop/pull/1":   0,
		"https://ghe.example/acme/shop/pull/1":    0,
		"https://gitlab.example/acme/shop/pull/1": 0,
	} {
		repo, n, ok := pub.ChangeOf(url)
		if n != want || ok != (want > 0) || ok && (repo.Path != "acme/shop" || repo.Host != "github.com") {
			t.Errorf("ChangeOf(%q) = %+v, %d, %v; want number %d", url, repo, n, ok, want)
		}
	}
	if repo, n, ok := ent.ChangeOf("https://ghe.example/acme/shop/pull/7"); !ok || n != 7 || repo.Host != "ghe.example" {
		t.Errorf("a GitHub Enterprise Server pull request: %+v %d %v", repo, n, ok)
	}
}
