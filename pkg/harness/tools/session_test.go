package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/harness/harnesstest"
	"go.uber.org/zap/zaptest"
)

// testEnv is the tools' environment as a harness with its default
// configuration gives it.
func testEnv(t *testing.T) Env {
	return Env{Lang: harnesstest.Go(), OutputLimit: 8000, TestRunFloor: 2 * time.Minute, Log: zaptest.NewLogger(t)}
}

// newTestSession is a session of all the tools on the fixture, closed
// when the test ends.
func newTestSession(t *testing.T, f harnesstest.Fixture, p Patcher) *Session {
	t.Helper()
	env := testEnv(t)
	env.Patcher = p
	s := NewSession(env, f.WS, f.Task, All())
	t.Cleanup(s.Close)
	return s
}

// raw is a tool's arguments as a policy sends them.
func raw(args any) json.RawMessage {
	if args == nil {
		return nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return b
}

func do(t *testing.T, s *Session, name string, args any) Observation {
	t.Helper()
	obs, err := s.Execute(context.Background(), name, raw(args))
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
func wantCalls(t *testing.T, s *Session, calls []call) {
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
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)
	obs, err := s.Execute(context.Background(), "open_file", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, obs, true, `Unknown action "open_file"`, "read_file")
	obs, err = s.Execute(context.Background(), GoToLine, []byte(`{"path": "calc/calc.go", "line": "ten"}`))
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, obs, true, "arguments of go_to_line are not valid")
}
