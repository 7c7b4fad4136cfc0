package offline_test

import (
	"context"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/task"
)

func TestNewEpisodeResets(t *testing.T) {
	p := newPolicy(zaptest.NewLogger(t))
	ctx := context.Background()
	ep := &harness.Episode{Task: task.Task{ID: "a", Failures: []task.Failure{{Test: "TestX"}}}, Tools: tools.Specs(tools.All(), nil), MaxSteps: 40}
	a, err := p.Next(ctx, ep)
	if err != nil || a.Name != tools.GetTaskDetails {
		t.Fatalf("first action = %v, %v", a.Name, err)
	}
	ep.Steps = append(ep.Steps, harness.Step{N: 1, Action: a, Observation: tools.Observation{Content: "task"}})
	a, _ = p.Next(ctx, ep)
	if a.Name != tools.RunTests { // no blame commit: straight to reproducing
		t.Fatalf("second action = %v", a.Name)
	}
	// A new episode starts over.
	ep2 := &harness.Episode{Task: task.Task{ID: "b"}, Tools: tools.Specs(tools.All(), nil), MaxSteps: 40}
	if a, _ := p.Next(ctx, ep2); a.Name != tools.GetTaskDetails {
		t.Fatalf("new episode's first action = %v", a.Name)
	}
}
