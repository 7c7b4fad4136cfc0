package validators

import (
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
)

func diffOf(old, new string) string {
	a, b := "a/"+old, "b/"+new
	if old == "" {
		a = "/dev/null"
	}
	if new == "" {
		b = "/dev/null"
	}
	return "--- " + a + "\n+++ " + b + "\n@@ -1 +1 @@\n-x\n+y\n"
}

func TestRepoPathsGate(t *testing.T) {
	policy := repoconfig.Policy{Allow: []string{"pkg/**"}, Deny: []string{"pkg/secret/**"}}
	cases := []struct {
		name  string
		patch string
		pass  bool
		want  []string
	}{
		{"allowed", diffOf("pkg/calc/calc.go", "pkg/calc/calc.go"), true, []string{"1 file(s)"}},
		{"denied", diffOf("pkg/secret/key.go", "pkg/secret/key.go"), false, []string{`pkg/secret/key.go: refused by .redfix.yaml paths.deny "pkg/secret/**"`}},
		{"outside allow", diffOf("README.md", "README.md"), false, []string{`README.md: refused by .redfix.yaml paths.allow ("pkg/**")`}},
		{"renamed into a denied path", diffOf("pkg/a.go", "pkg/secret/a.go"), false, []string{"pkg/secret/a.go: refused"}},
		{"deleted from a denied path", diffOf("pkg/secret/old.go", ""), false, []string{"pkg/secret/old.go: refused"}},
		{"one of two", diffOf("pkg/ok.go", "pkg/ok.go") + diffOf("main.go", "main.go"), false, []string{"main.go: refused"}},
	}
	v := New(Config{}, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cand := &candidate{in: Input{Patch: c.patch, Paths: policy}}
			if cand.files, cand.parseErr = unidiff.Parse(c.patch); cand.parseErr != nil {
				cand.files = nil
			}
			g, err := v.repoPaths(context.Background(), cand)
			if err != nil {
				t.Fatal(err)
			}
			if (g.Verdict == task.GatePass) != c.pass {
				t.Errorf("verdict %s (%s); want pass=%v", g.Verdict, g.Detail, c.pass)
			}
			for _, w := range c.want {
				if !strings.Contains(g.Detail, w) {
					t.Errorf("detail %q lacks %q", g.Detail, w)
				}
			}
		})
	}
}

func TestRepoPathsGateRunsFirstAndStopsTheCostlyGates(t *testing.T) {
	f := newFixture(t, nil)
	in := f.input(t, map[string]string{"calc/calc.go": fixed})
	in.Paths = repoconfig.Policy{Deny: []string{"calc"}}
	list, err := New(Config{}, nil).Check(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 || list[0].Name != GateRepoPaths {
		t.Fatalf("gates %+v; want the paths gate first", list)
	}
	gates := map[string]task.Gate{}
	for _, g := range list {
		gates[g.Name] = g
	}
	want(t, gates, GateRepoPaths, task.GateFail, `calc/calc.go: refused by .redfix.yaml paths.deny "calc"`)
	wantSkipped(t, gates, GateRepoPaths, GateStatic, GateOracle, GateRegression)

	in.Paths = nil
	if _, ok := check(t, Config{}, in)[GateRepoPaths]; ok {
		t.Error("the paths gate ran without a repository policy")
	}
}
