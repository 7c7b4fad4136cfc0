package worker

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testenv"
)

type policies struct {
	pol repoconfig.Policy
	err error
}

func (p policies) Load(context.Context, string, string) (repoconfig.Policy, error) {
	return p.pol, p.err
}

type openPulls int

func (n openPulls) OpenPullRequests(context.Context, string) (int, error) { return int(n), nil }

func TestRepoPolicyStopsOrShapesTheTask(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tk := task.Task{ID: "t1", Repo: "https://github.com/acme/shop", Commit: "abc1234567890"}
	central := repoconfig.Policy{Enabled: true, Source: "central configuration"}
	cases := []struct {
		name   string
		p      Pipeline
		status task.Status
		reason string
		err    bool
	}{
		{"no policies", Pipeline{}, "", "", false},
		{"enabled", Pipeline{RepoPolicies: policies{pol: central}}, "", "", false},
		{"opted out", Pipeline{RepoPolicies: policies{pol: repoconfig.Policy{Source: ".redfix.yaml at abc"}}}, task.StatusDropped, "repository opted out in its .redfix.yaml at abc (enabled: false)", false},
		{"invalid file: central applies", Pipeline{RepoPolicies: policies{pol: central, err: &repoconfig.InvalidError{Err: errors.New("bad")}}}, "", "", false},
		{"the mirror fails", Pipeline{RepoPolicies: policies{pol: central, err: errors.New("fetch refused")}}, "", "", true},
		{"under the open limit", Pipeline{RepoPolicies: policies{pol: repoconfig.Policy{Enabled: true, OpenPullRequests: 2}}, OpenPulls: openPulls(1)}, "", "", false},
		{"at the open limit", Pipeline{RepoPolicies: policies{pol: repoconfig.Policy{Enabled: true, OpenPullRequests: 2, Source: ".redfix.yaml at abc"}}, OpenPulls: openPulls(2)}, task.StatusOverBudget, "refused: 2 of the repository's limit of 2 open pull requests are open (.redfix.yaml at abc)", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stop, err := c.p.repoPolicy(ctx, tk, zap.NewNop())
			if (err != nil) != c.err {
				t.Fatalf("error %v; want one: %v", err, c.err)
			}
			if stop.Status != c.status || !strings.Contains(stop.Reason, c.reason) {
				t.Errorf("stop %q %q; want %q %q", stop.Status, stop.Reason, c.status, c.reason)
			}
		})
	}
	pol := &repoconfig.Policy{Deny: []string{"a/**"}, Reviewers: []string{"alice"}, Labels: []string{"bot"}, Driver: "node",
		Tests: testenv.Settings{Env: map[string]string{"TZ": "UTC"}}, Source: ".redfix.yaml at abc"}
	if paths(pol) == nil || paths(&repoconfig.Policy{}) != nil || paths(nil) != nil {
		t.Error("paths: a rule only when the policy names paths")
	}
	if reviewers(pol)[0] != "alice" || labels(pol)[0] != "bot" || jobLanguageOf(pol).driver != "node" || reviewers(nil) != nil || jobLanguageOf(nil).driver != "" {
		t.Error("the policy's reviewers, labels and driver are not passed on")
	}
	if j := jobLanguageOf(pol); j.tests.String() != "env TZ=UTC" || j.source != pol.Source {
		t.Errorf("the policy's test settings are not passed on: %+v", j)
	}
}
