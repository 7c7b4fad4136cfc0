package llmpolicy

import (
	"reflect"
	"testing"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
)

// The condenser keeps the latest view of each file by what the episode's
// tools are (their kind), not by their names: a tool it has never heard of
// that lists a file's lines counts, one that does not list lines does not.
func TestLatestFileViewsByKind(t *testing.T) {
	ep := &harness.Episode{Tools: append(tools.Specs(tools.All(), nil),
		tools.Spec{Name: "show_lines", Kind: tools.KindListing},
		tools.Spec{Name: "blame_lines", Kind: tools.KindOther},
	)}
	for _, a := range []struct {
		tool, path string
		isError    bool
	}{
		{tools.ReadFile, "a.go", false},         // 0: a.go, later shown again
		{tools.GoToLine, "b.go", false},         // 1: b.go, later shown by show_lines
		{tools.ReadFile, "a.go", false},         // 2: a.go's latest
		{"show_lines", "b.go", false},           // 3: b.go's latest
		{"blame_lines", "c.go", false},          // 4: lists no lines
		{tools.ReadFile, "d.go", true},          // 5: an error shows nothing
		{tools.SearchCodeInFile, "e.go", false}, // 6: hits, not a listing
	} {
		ep.Steps = append(ep.Steps, harness.Step{
			Action:      harness.NewAction(a.tool, "", map[string]string{"path": a.path}),
			Observation: tools.Observation{IsError: a.isError},
		})
	}
	if got, want := latestFileViews(ep), map[int]bool{2: true, 3: true}; !reflect.DeepEqual(got, want) {
		t.Errorf("latest views %v, want %v", got, want)
	}
}
