package testenv

import (
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		want string // "" allowed, else in the error
	}{
		{"TZ", ""}, {"LANG", ""}, {"LC_ALL", ""}, {"LC_TIME", ""}, {"PYTHONHASHSEED", ""}, {"NODE_ENV", ""}, {"CI", ""},
		{"FORCE_COLOR", ""}, {"DJANGO_SETTINGS_MODULE", ""}, {"APP_ENV", ""}, {"MONKEY_MODE", ""},
		{"GITHUB_TOKEN", "looks like a credential's name (it has TOKEN)"},
		{"AWS_SECRET_ACCESS_KEY", "it has SECRET"},
		{"DB_PASSWORD", "it has PASSWORD"},
		{"API_KEY", "the word KEY"},
		{"NPM_AUTH", "the word AUTH"},
		{"GOOGLE_APPLICATION_CREDENTIALS", "it has CREDENTIAL"},
		{"PATH", "set by redfix or the sandbox"},
		{"HOME", "set by redfix or the sandbox"},
		{"HTTPS_PROXY", "connections"},
		{"GOFLAGS", "(GO…) belongs to a tool"},
		{"GOCACHE", "(GO…)"},
		{"PYTHONPATH", "(PYTHON…)"},
		{"NODE_OPTIONS", "(NODE_…)"},
		{"NODE_PATH", "(NODE_…)"},
		{"LD_PRELOAD", "(LD_…)"},
		{"PYTEST_ADDOPTS", "(PYTEST_…)"},
		{"REDFIX_REPORT", "(REDFIX_…)"},
		{"tz", "not a plain variable name"},
		{"A-B", "not a plain variable name"},
		{"", "not a plain variable name"},
		{strings.Repeat("A", MaxNameBytes+1), "not a plain variable name"},
	} {
		err := CheckName(c.name)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v; want one with %q", c.name, err, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	s := Settings{
		Env:              map[string]string{"TZ": "America/New_York", "X": "a\nb", "SECRET_THING": "v"},
		Args:             []string{"--doctest-modules", "tests/test_x.py", "--a\nb", ""},
		DependencyGroups: []string{"test", "a b"},
	}
	var got []string
	for _, e := range s.Check("tests") {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"tests.env: SECRET_THING looks like a credential's name",
		"tests.env.X: the value is more than one line",
		`tests.args: item 2: "tests/test_x.py" is not an option`,
		"tests.args: item 3: \"--a\\nb\" is more than one line",
		"tests.args: item 4",
		`tests.dependency_groups: item 2: "a b" is not a group's name`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("errors\n%s\nlack %q", all, want)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d errors, want 6:\n%s", len(got), all)
	}
	if errs := (Settings{Env: map[string]string{"TZ": "UTC"}, Args: []string{"-pno:randomly"}}).Check("tests"); len(errs) > 0 {
		t.Errorf("valid settings refused: %v", errs)
	}
}

func TestMergeAndString(t *testing.T) {
	t.Parallel()
	central := Settings{Env: map[string]string{"TZ": "UTC", "LANG": "C.UTF-8"}, Args: []string{"-x1"}, DependencyGroups: []string{"test"}}
	m := central.Merge(Settings{Env: map[string]string{"TZ": "America/New_York"}, Args: []string{"-x2"}})
	if got, want := m.String(), "env LANG=C.UTF-8 TZ=America/New_York; args -x1 -x2; dependency groups test"; got != want {
		t.Errorf("merged %q, want %q", got, want)
	}
	if central.Env["TZ"] != "UTC" {
		t.Error("Merge changed its receiver")
	}
	if !(Settings{}).IsZero() || (Settings{}).String() != "" {
		t.Error("zero settings are not zero")
	}
}
