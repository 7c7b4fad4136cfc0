package repourl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCanonicalSpellingsAgree(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(repo, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, group := range [][]string{
		{
			"https://github.com/Org/Repo",
			"https://github.com/Org/Repo.git",
			"https://github.com/Org/Repo/",
			"HTTPS://GitHub.COM/Org/Repo.git/",
			"https://github.com:443/Org/Repo",
			"https://x-access-token:s3cret@github.com/Org/Repo.git",
			"https://github.com/Org/other/../Repo",
			"https://github.com//Org/./Repo?ref=main#frag",
		},
		{
			"ssh://git@github.com/Org/Repo.git",
			"git@github.com:Org/Repo.git",
			"ssh://git:pw@GITHUB.com:22/Org/Repo",
		},
		{
			repo,
			repo + "/",
			repo + "/.git",
			filepath.Join(dir, "x", "..", "repo"),
			"file://" + repo,
			"file://" + repo + "/.git/",
			filepath.Join(dir, "link"),
		},
	} {
		want, err := Canonical(group[0])
		if err != nil {
			t.Fatalf("%s: %v", group[0], err)
		}
		for _, raw := range group[1:] {
			got, err := Canonical(raw)
			if err != nil {
				t.Errorf("%s: %v", raw, err)
				continue
			}
			if got != want {
				t.Errorf("Canonical(%q) = %q, want %q (as %q)", raw, got, want, group[0])
			}
		}
	}
	if got, _ := Canonical("https://x-access-token:s3cret@github.com/Org/Repo.git"); got != "https://github.com/Org/Repo" {
		t.Errorf("credentials kept or path changed: %q", got)
	}
	if got, _ := Canonical(repo + "/.git"); got != repo {
		t.Errorf("local: %q, want %q", got, repo)
	}
}

func TestCanonicalRejects(t *testing.T) {
	for _, raw := range []string{
		"",
		"--upload-pack=touch /tmp/pwned",
		"-oProxyCommand=x",
		"ext::sh -c touch% /tmp/pwned",
		"fd::17",
		"ftp://example.com/repo",
		"javascript://x/y",
		"file://otherhost/etc",
		"https:///nohost",
		"https://example.com/",
		"ssh://-oProxyCommand=x/repo",
		"https://example.com/a\nb",
	} {
		if got, err := Canonical(raw); !errors.Is(err, ErrInvalid) {
			t.Errorf("Canonical(%q) = %q, %v; want ErrInvalid", raw, got, err)
		}
	}
}

func TestIsNetwork(t *testing.T) {
	dir := t.TempDir()
	for loc, want := range map[string]bool{
		"https://github.com/org/repo.git": true,
		"http://127.0.0.1:4000/org/repo":  true,
		"ssh://git@github.com/org/repo":   true,
		"git://git.example/org/repo":      true,
		"git@github.com:org/repo.git":     true,
		"file://" + dir:                   false,
		dir:                               false,
		"./repo":                          false,
		"repo":                            false,
		"":                                false,
	} {
		if got := IsNetwork(loc); got != want {
			t.Errorf("IsNetwork(%q) = %v, want %v", loc, got, want)
		}
	}
	// On canonical locations, network and local are the two sides.
	for _, raw := range []string{"https://GitHub.com/Org/Repo.git", "git@github.com:Org/Repo.git", "ssh://git@github.com:22/Org/Repo", "git://git.example/org/repo", "file://" + dir, dir} {
		c, err := Canonical(raw)
		if err != nil {
			t.Fatal(err)
		}
		if IsNetwork(c) == IsLocal(c) {
			t.Errorf("%q (canonical %q): IsNetwork %v, IsLocal %v", raw, c, IsNetwork(c), IsLocal(c))
		}
	}
}

func TestAllowlist(t *testing.T) {
	a, err := NewAllowlist("https://GitHub.com/org/*", "/srv/repos/**", "ssh://git@git.example/team/app.git")
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]bool{
		"https://github.com/org/app.git":         true,
		"https://github.com/org/app/../other":    true,
		"https://github.com/org/sub/app":         false,
		"https://github.com/other/app":           false,
		"https://github.com/org/../other/app":    false,
		"/srv/repos/a/b":                         true,
		"file:///srv/repos/a":                    true,
		"/srv/repos/../../etc":                   false,
		"file:///etc":                            false,
		"/etc":                                   false,
		"ssh://127.0.0.1:1/x.git":                false,
		"git@git.example:team/app":               true,
		"https://x:token@github.com/org/app.git": true,
		"ssh://git@git.example:2222/team/app":    false,
	} {
		c, err := Canonical(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := a.Allows(c); got != want {
			t.Errorf("Allows(%q → %q) = %v, want %v", raw, c, got, want)
		}
	}
	empty, _ := NewAllowlist()
	if !empty.Empty() || empty.Allows("/srv/repos/a") {
		t.Error("the empty allowlist allows something")
	}
	if _, err := NewAllowlist("ext::x"); err == nil {
		t.Error("a pattern that is not a location was accepted")
	}
}

// TestPrefix: a prefix is canonical as the repositories under it are, so
// that every spelling of a repository under it starts with it; a prefix
// that could match a sibling directory, or carries what a prefix cannot
// mean, is refused.
func TestPrefix(t *testing.T) {
	for raw, want := range map[string]string{
		"https://Git.Example:443/team/": "https://git.example/team/",
		"git://127.0.0.1:9418/":         "git://127.0.0.1/",
		"git://127.0.0.1:4000":          "git://127.0.0.1:4000/",
		"http://h/a/../b/":              "http://h/b/",
		"ssh://git@h/repos/":            "ssh://git@h/repos/",
	} {
		got, err := Prefix(raw)
		if err != nil || got != want {
			t.Errorf("Prefix(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	p, _ := Prefix("https://git.example/team/")
	for repo, under := range map[string]bool{
		"https://GIT.example/team/app.git": true,
		"https://git.example/team/a/b":     true,
		"https://git.example/teamster/app": false,
		"http://git.example/team/app":      false,
	} {
		c, err := Canonical(repo)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.HasPrefix(c, p); got != under {
			t.Errorf("%s under %s: %v, want %v", c, p, got, under)
		}
	}
	for _, bad := range []string{"", "git.example/team/", "https://git.example/team", "https://bot:pw@git.example/team/", "https://git.example/team/?x=1", "https://git.example/*/", "file:///srv/repos/", "/srv/repos/", "ftp://h/x/"} {
		if got, err := Prefix(bad); err == nil {
			t.Errorf("Prefix(%q) = %q, want an error", bad, got)
		}
	}
}
