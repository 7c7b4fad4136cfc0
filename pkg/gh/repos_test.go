package gh_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/redfix/redfix/pkg/gh"
	"github.com/redfix/redfix/pkg/gh/ghtest"
)

func fullNames(repos []*github.Repository) []string {
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
	c, err := gh.New(gh.Config{APIURL: srv.APIURL(), AppID: app.ID, PrivateKeyFile: app.KeyFile})
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

func TestParseRepo(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/acme/widgets.git":          "acme/widgets",
		"https://github.com/acme/widgets":              "acme/widgets",
		"https://ghe.example/acme/widgets.git":         "acme/widgets",
		"git@github.com:acme/widgets.git":              "acme/widgets",
		"http://127.0.0.1:4000/acme/widgets.git":       "acme/widgets",
		"https://ghe.example/prefix/acme/widgets.git/": "acme/widgets",
		"ssh://git@github.com/acme/widgets.git":        "acme/widgets",
	} {
		o, n, err := gh.ParseRepo(in)
		if err != nil || o+"/"+n != want {
			t.Errorf("ParseRepo(%q) = %q/%q, %v; want %s", in, o, n, err, want)
		}
	}
	for _, bad := range []string{"", "/tmp/repo", "https://github.com/acme"} {
		if _, _, err := gh.ParseRepo(bad); err == nil {
			t.Errorf("ParseRepo(%q) accepted", bad)
		}
	}
}
