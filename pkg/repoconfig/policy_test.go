package repoconfig

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/testenv"
)

func TestNarrowNeverWidens(t *testing.T) {
	open := Central{Enabled: true, RepairsPerDay: 10, OpenPullRequests: 3, Forks: true,
		Revert: RevertPolicy{Enabled: true, MaxAge: 24 * time.Hour}}
	shut := Central{Enabled: false, Driver: "python", RepairsPerDay: 2, Revert: RevertPolicy{Enabled: false, MaxAge: 6 * time.Hour}}
	unlimited := Central{Enabled: true}
	centralTests := Central{Enabled: true, Tests: testenv.Settings{Env: map[string]string{"TZ": "UTC", "LANG": "C.UTF-8"}, Args: []string{"-x1"}}}
	locked := centralTests
	locked.TestsLocked = true
	cases := []struct {
		name    string
		central Central
		file    string
		check   func(p Policy) bool
		held    []string // keys named in Held
	}{
		{"turn itself off", open, "enabled: false", func(p Policy) bool { return !p.Enabled }, nil},
		{"cannot turn on what central turned off", shut, "enabled: true", func(p Policy) bool { return !p.Enabled }, []string{"enabled"}},
		{"forks off", open, "forks: false", func(p Policy) bool { return !p.Forks }, nil},
		{"cannot turn forks on", shut, "forks: true", func(p Policy) bool { return !p.Forks }, []string{"forks"}},
		{"lower limits", open, "limits: {repairs_per_day: 4, open_pull_requests: 1}", func(p Policy) bool { return p.RepairsPerDay == 4 && p.OpenPullRequests == 1 }, nil},
		{"cannot raise limits", open, "limits: {repairs_per_day: 40, open_pull_requests: 9}", func(p Policy) bool { return p.RepairsPerDay == 10 && p.OpenPullRequests == 3 }, []string{"limits.repairs_per_day", "limits.open_pull_requests"}},
		{"a limit where central has none", unlimited, "limits: {open_pull_requests: 2}", func(p Policy) bool { return p.OpenPullRequests == 2 && p.RepairsPerDay == 0 }, nil},
		{"no limits keep central's", open, "reviewers: [alice]", func(p Policy) bool { return p.RepairsPerDay == 10 && p.OpenPullRequests == 3 }, nil},
		{"driver where central detects", open, "languages: {driver: node}", func(p Policy) bool { return p.Driver == "node" }, nil},
		{"driver central pinned", shut, "languages: {driver: go}", func(p Policy) bool { return p.Driver == "python" }, []string{"languages.driver"}},
		{"a test command is never taken", open, `languages: {test_command: "make test"}`, func(p Policy) bool { return p.Tests.IsZero() }, []string{"languages.test_command"}},
		{"tests where central has none", open, "tests: {env: {TZ: America/New_York}, args: [--doctest-modules], dependency_groups: [test]}", func(p Policy) bool {
			return p.Tests.String() == "env TZ=America/New_York; args --doctest-modules; dependency groups test"
		}, nil},
		{"tests laid on central's", centralTests, "tests: {env: {TZ: America/New_York}, args: [-x2]}", func(p Policy) bool {
			return p.Tests.String() == "env LANG=C.UTF-8 TZ=America/New_York; args -x1 -x2"
		}, nil},
		{"central's tests without a section", centralTests, "reviewers: [alice]", func(p Policy) bool { return p.Tests.String() == "env LANG=C.UTF-8 TZ=UTC; args -x1" }, nil},
		{"central forbids a repository's tests", locked, "tests: {env: {TZ: America/New_York}}", func(p Policy) bool { return p.Tests.String() == "env LANG=C.UTF-8 TZ=UTC; args -x1" }, []string{"tests"}},
		{"revert off", open, "revert: {enabled: false}", func(p Policy) bool { return !p.Revert.Enabled }, nil},
		{"cannot turn revert on", shut, "revert: {enabled: true, first_paths: [db/**]}", func(p Policy) bool { return !p.Revert.Enabled && len(p.Revert.FirstPaths) == 0 }, []string{"revert.enabled", "revert.first_paths"}},
		{"shorter revert age", open, "revert: {max_age: 2h}", func(p Policy) bool { return p.Revert.MaxAge == 2*time.Hour }, nil},
		{"longer revert age held", open, "revert: {max_age: 72h, first_paths: [db/**]}", func(p Policy) bool {
			return p.Revert.MaxAge == 24*time.Hour && slices.Equal(p.Revert.FirstPaths, []string{"db/**"})
		}, []string{"revert.max_age"}},
		{"reviewers and labels", open, "reviewers: [alice, acme/core]\nlabels: [bot]", func(p Policy) bool {
			return slices.Equal(p.Reviewers, []string{"alice", "acme/core"}) && slices.Equal(p.Labels, []string{"bot"})
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse([]byte("version: 1\n" + c.file + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			p := Narrow(c.central, f, "abc123")
			if !c.check(p) {
				t.Errorf("policy %+v", p)
			}
			if len(p.Held) != len(c.held) {
				t.Errorf("held %q; want %q", p.Held, c.held)
			}
			for i, h := range c.held {
				if i < len(p.Held) && !strings.HasPrefix(p.Held[i], h+":") {
					t.Errorf("held[%d] = %q; want it to name %s", i, p.Held[i], h)
				}
			}
			if p.Source != ".redfix.yaml at abc123" {
				t.Errorf("source %q", p.Source)
			}
		})
	}
}

func TestPathAllowed(t *testing.T) {
	p := Policy{Allow: []string{"pkg/**", "cmd"}, Deny: []string{"pkg/secret/**", "**/*.pb.go"}}
	cases := []struct {
		path string
		ok   bool
		rule string
	}{
		{"pkg/calc/calc.go", true, ""},
		{"cmd/bot/main.go", true, ""},
		{"./pkg/calc/../calc/x.go", true, ""},
		{"pkg/secret/key.go", false, `paths.deny "pkg/secret/**"`},
		{"pkg/api/api.pb.go", false, `paths.deny "**/*.pb.go"`},
		{"pkg/x/../secret/k.go", false, `paths.deny "pkg/secret/**"`},
		{"README.md", false, `paths.allow ("pkg/**", "cmd") names no glob it matches`},
		{"cmdx/main.go", false, "paths.allow"},
	}
	for _, c := range cases {
		ok, rule := p.PathAllowed(c.path)
		if ok != c.ok || !strings.Contains(rule, c.rule) {
			t.Errorf("PathAllowed(%q) = %v, %q; want %v, %q", c.path, ok, rule, c.ok, c.rule)
		}
	}
	if ok, _ := (Policy{}).PathAllowed("anything/at/all.go"); !ok {
		t.Error("a policy without paths refused a path")
	}
}
