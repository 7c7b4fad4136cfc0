package forge_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
)

// TestRepoOfKeepsTheFullPath: a repository's identity is its host and its
// whole path, whatever the URL's spelling; nested groups are kept (the
// path is not cut to its last two parts).
func TestRepoOfKeepsTheFullPath(t *testing.T) {
	for in, want := range map[string]forge.RepoID{
		"https://github.com/acme/shop.git":                {Host: "github.com", Path: "acme/shop"},
		"https://GitHub.com/acme/shop/":                   {Host: "github.com", Path: "acme/shop"},
		"git@gitlab.example:group/sub/deeper/shop.git":    {Host: "gitlab.example", Path: "group/sub/deeper/shop"},
		"ssh://git@gitlab.example:2222/group/sub/shop":    {Host: "gitlab.example:2222", Path: "group/sub/shop"},
		"https://token@git.example:8443/group/sub/shop":   {Host: "git.example:8443", Path: "group/sub/shop"},
		"https://git.example:443/group/sub/shop.git":      {Host: "git.example", Path: "group/sub/shop"},
		"https://git.example/group/sub/../other/shop.git": {Host: "git.example", Path: "group/other/shop"},
	} {
		got, err := forge.RepoOf(in)
		if err != nil || got != want {
			t.Errorf("RepoOf(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	r := forge.RepoID{Host: "gitlab.example", Path: "group/sub/shop"}
	if r.Name() != "shop" || r.Namespace() != "group/sub" || r.String() != "gitlab.example/group/sub/shop" || len(r.Segments()) != 3 {
		t.Errorf("parts of %+v: %q %q %q %v", r, r.Name(), r.Namespace(), r.String(), r.Segments())
	}
	if !r.Same(forge.RepoID{Host: "GitLab.example", Path: "Group/Sub/Shop"}) || r.Same(forge.RepoID{Host: "gitlab.example", Path: "sub/shop"}) {
		t.Error("Same compares host and whole path without case")
	}
	for _, in := range []string{"/srv/repos/shop", "file:///srv/repos/shop", "", "ext::sh -c evil"} {
		if got, err := forge.RepoOf(in); err == nil {
			t.Errorf("RepoOf(%q) = %+v; want no forge repository", in, got)
		}
	}
}

// driver serves one host, whose change requests are HOST/PATH/-/change/N.
type driver struct {
	name, host string
	env        []string
}

func (d driver) Name() string                  { return d.name }
func (d driver) Serves(repo forge.RepoID) bool { return repo.Host == d.host }
func (d driver) ChangeOf(url string) (forge.RepoID, int, bool) {
	if url == "https://"+d.host+"/group/sub/shop/-/change/7" {
		return forge.RepoID{Host: d.host, Path: "group/sub/shop"}, 7, true
	}
	return forge.RepoID{}, 0, false
}
func (d driver) GitEnv(context.Context, string) ([]string, error) { return d.env, nil }

// reviewer is a capability one driver has.
type reviewer interface{ Review() string }

type reviewing struct{ driver }

func (reviewing) Review() string { return "reviewed" }

// TestRegistryChoosesTheDriverThatServes: the registry's one choice, by
// the repository's identity, for repositories, change requests, clone
// credentials and capabilities.
func TestRegistryChoosesTheDriverThatServes(t *testing.T) {
	a := reviewing{driver{name: "a", host: "a.example", env: []string{"A=1"}}}
	b := driver{name: "b", host: "b.example"}
	fs := forge.New(a, b)
	if d, id, err := fs.ForURL("https://b.example/group/sub/shop.git"); err != nil || d.Name() != "b" || id.Path != "group/sub/shop" {
		t.Errorf("ForURL: %v %+v %v", d, id, err)
	}
	if _, _, err := fs.ForURL("https://c.example/x/y"); !errors.Is(err, forge.ErrNotServed) {
		t.Errorf("an unserved host: %v; want ErrNotServed", err)
	}
	if _, _, err := fs.ForURL("/srv/repos/shop"); !errors.Is(err, forge.ErrNotServed) {
		t.Errorf("a local path: %v; want ErrNotServed", err)
	}
	if fix, ok := fs.FixOf("https://a.example/group/sub/shop/-/change/7"); !ok || fix.Repo != "group/sub/shop" || fix.Number != 7 {
		t.Errorf("FixOf: %+v %v", fix, ok)
	}
	if _, ok := fs.FixOf("/data/pull-requests/t1"); ok {
		t.Error("a local pull request read as a forge's")
	}
	if env, err := fs.GitEnv(context.Background(), "https://a.example/x/y.git"); err != nil || len(env) != 1 {
		t.Errorf("clone credentials of a: %v %v", env, err)
	}
	if env, err := fs.GitEnv(context.Background(), "https://c.example/x/y.git"); err != nil || env != nil {
		t.Errorf("clone credentials of an unserved host: %v %v", env, err)
	}
	if r, err := forge.As[reviewer](fs, forge.RepoID{Host: "a.example", Path: "x/y"}); err != nil || r.Review() != "reviewed" {
		t.Errorf("a's capability: %v", err)
	}
	if _, err := forge.As[reviewer](fs, forge.RepoID{Host: "b.example", Path: "x/y"}); !errors.Is(err, forge.ErrUnsupported) {
		t.Errorf("b lacks the capability: %v; want ErrUnsupported", err)
	}
	var none *forge.Forges
	if _, err := none.For(forge.RepoID{Host: "a.example", Path: "x/y"}); !errors.Is(err, forge.ErrNotServed) {
		t.Errorf("no forges configured: %v", err)
	}
}
