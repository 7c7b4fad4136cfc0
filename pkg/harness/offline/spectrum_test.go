package offline

import (
	"slices"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

func TestGotValues(t *testing.T) {
	s := &state{p: New(nil, testDrivers()), failures: []task.Failure{
		{Message: `ValidEmail("me@example.org") = false`},
		{Message: `Letter(75) = "C", want "B"`},
		{Message: "got -3, want 4"},
		{Message: "Balance = -300, want 300"},
	}}
	want := []string{"false", `"C"`, "-3", "-300"}
	if got := s.gotValues(); !slices.Equal(got, want) {
		t.Errorf("gotValues = %q, want %q", got, want)
	}
}
