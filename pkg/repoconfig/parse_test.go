package repoconfig

import (
	"strings"
	"testing"
)

func TestParseIsStrict(t *testing.T) {
	cases := []struct {
		name, file string
		wantErr    []string // each must appear; none: valid
	}{
		{"every key", `version: 1
enabled: true
paths: {allow: ["pkg/**"], deny: ["pkg/secret/**", "*.pb.go"]}
languages: {driver: go, test_command: "go test ./..."}
reviewers: [alice, acme/core]
labels: [redfix, bot]
limits: {open_pull_requests: 2, repairs_per_day: 5}
revert: {enabled: true, max_age: 12h, first_paths: ["migrations/**"]}
forks: false
tests: {env: {TZ: America/New_York, LC_ALL: C.UTF-8}, args: [--doctest-modules], dependency_groups: [test]}
`, nil},
		{"version only", "version: 1\n", nil},
		{"empty", "", []string{"empty", "version: 1"}},
		{"no version", "enabled: false\n", []string{"version is missing"}},
		{"version 2", "version: 2\n", []string{"line 1", "version: must be 1, got 2"}},
		{"unknown top key", "version: 1\nenable: false\n", []string{"line 2", `unknown key "enable"`, "known: version, enabled"}},
		{"unknown nested key", "version: 1\npaths:\n  allow: [a]\n  denied: [b]\n", []string{"line 4", `unknown key "paths.denied" in paths`, "known: allow, deny"}},
		{"two unknown keys, both named", "version: 1\nfoo: 1\nlimits: {prs: 2}\n", []string{"line 2", `"foo"`, "line 3", `"limits.prs"`}},
		{"wrong type", "version: 1\nenabled: sometimes\n", []string{"line 2: enabled:", "bool"}},
		{"wrong type of a list", "version: 1\nreviewers: alice\n", []string{"line 2: reviewers:", "[]string"}},
		{"a section not a mapping", "version: 1\npaths: [a]\n", []string{"line 2", `"paths" must be a mapping`}},
		{"bad glob", "version: 1\npaths: {deny: [\"pkg/[x\"]}\n", []string{"line 2", "paths.deny", "not a glob"}},
		{"absolute glob", "version: 1\npaths: {allow: [\"/etc/**\"]}\n", []string{"paths.allow", "absolute"}},
		{"climbing glob", "version: 1\nrevert: {first_paths: [\"../x\"]}\n", []string{"revert.first_paths", `".."`}},
		{"unknown driver", "version: 1\nlanguages: {driver: rust}\n", []string{"line 2", "languages.driver", "go, python, node"}},
		{"bad duration", "version: 1\nrevert: {max_age: soon}\n", []string{"line 2", "duration"}},
		{"zero limit", "version: 1\nlimits: {repairs_per_day: 0}\n", []string{"limits.repairs_per_day", "at least 1"}},
		{"bad reviewer", "version: 1\nreviewers: [\"a b\"]\n", []string{"reviewers", "not a user"}},
		{"key twice", "version: 1\nforks: true\nforks: false\n", []string{"line 3", "twice"}},
		{"not a mapping", "- version: 1\n", []string{"line 1", "mapping"}},
		{"two documents", "version: 1\n---\nversion: 1\n", []string{"second YAML document"}},
		{"not YAML", "version: [1\n", []string{"not YAML"}},
		{"a secret-looking variable", "version: 1\ntests:\n  env:\n    TZ: UTC\n    GITHUB_TOKEN: x\n", []string{"line 5", "tests.env: GITHUB_TOKEN looks like a credential's name (it has TOKEN)", "never get credentials"}},
		{"a variable of redfix's tools", "version: 1\ntests: {env: {PYTHONPATH: /x}}\n", []string{"line 2", "tests.env: PYTHONPATH (PYTHON…) belongs to a tool"}},
		{"the sandbox's variable", "version: 1\ntests: {env: {HOME: /x, LD_PRELOAD: /x.so}}\n", []string{"HOME is set by redfix or the sandbox", "LD_PRELOAD (LD_…)"}},
		{"a value of two lines", "version: 1\ntests: {env: {TZ: \"a\\nb\"}}\n", []string{"tests.env.TZ: the value is more than one line"}},
		{"a bare word as an argument", "version: 1\ntests:\n  args: [tests/test_a.py]\n", []string{"line 3", `tests.args: item 1: "tests/test_a.py" is not an option`}},
		{"a bad group", "version: 1\ntests: {dependency_groups: [\"a b\"]}\n", []string{"tests.dependency_groups", "not a group's name"}},
		{"an unknown key of tests", "version: 1\ntests: {environment: {TZ: UTC}}\n", []string{`unknown key "tests.environment"`, "known: env, args, dependency_groups"}},
		{"too large", "version: 1\n#" + strings.Repeat("x", MaxFileBytes), []string{"bytes, more than"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.file))
			if len(c.wantErr) == 0 {
				if err != nil {
					t.Fatalf("valid file refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("invalid file accepted; want an error with %q", c.wantErr)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestParseReadsValues(t *testing.T) {
	f, err := Parse([]byte("version: 1\nrevert: {max_age: 90m}\nlimits: {open_pull_requests: 3}\npaths: {deny: [vendor]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if *f.Version != 1 || f.Revert.MaxAge == nil || *f.Revert.MaxAge != Duration(90*60e9) || *f.Limits.OpenPullRequests != 3 || f.Limits.RepairsPerDay != nil || f.Paths.Deny[0] != "vendor" || f.Enabled != nil {
		t.Errorf("parsed %+v", f)
	}
}
