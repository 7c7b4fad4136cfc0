package harness

import (
	"context"
	"strings"
	"testing"
)

func do(t *testing.T, s *session, name string, args any) Observation {
	t.Helper()
	obs, err := s.execute(context.Background(), NewAction(name, "", args))
	if err != nil {
		t.Fatalf("%s(%+v): %v", name, args, err)
	}
	return obs
}

func wantContent(t *testing.T, obs Observation, isError bool, parts ...string) {
	t.Helper()
	if obs.IsError != isError {
		t.Errorf("IsError = %v, want %v; content:\n%s", obs.IsError, isError, obs.Content)
	}
	for _, p := range parts {
		if !strings.Contains(obs.Content, p) {
			t.Errorf("content does not contain %q:\n%s", p, obs.Content)
		}
	}
}

// call is an action of a table of calls and what its observation says:
// whether it is an error, and parts of its content.
type call struct {
	act     string
	args    any
	isError bool
	want    []string
}

// wantCalls runs the calls in order in s and checks each observation.
func wantCalls(t *testing.T, s *session, calls []call) {
	t.Helper()
	for _, c := range calls {
		obs := do(t, s, c.act, c.args)
		if obs.IsError != c.isError || !containsAll(obs.Content, c.want) {
			t.Errorf("%s %+v: IsError = %v, want %v, and the content should contain %q:\n%s", c.act, c.args, obs.IsError, c.isError, c.want, obs.Content)
		}
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func TestUnknownActionAndBadArgs(t *testing.T) {
	f := newFixture(t)
	s := newTestSession(t, f, nil)
	obs, err := s.execute(context.Background(), Action{Name: "open_file"})
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, obs, true, `Unknown action "open_file"`, "read_file")
	obs, err = s.execute(context.Background(), Action{Name: ActGoToLine, Args: []byte(`{"path": "calc/calc.go", "line": "ten"}`)})
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, obs, true, "arguments of go_to_line are not valid")
}
