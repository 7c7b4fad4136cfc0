package findings

import (
	"slices"
	"testing"
)

// Each base finding excuses one head finding with its key: a finding the
// change repeats once more than the base had is new once; the texts (line
// numbers a change moves) do not count.
func TestCompareExcusesOneHeadFindingPerBaseFinding(t *testing.T) {
	base := []Finding{{Key: "vet: a.x: unused", Text: "vet: a.x:3: unused"}, {Key: "fmt: a.x: rewrite  y", Text: "fmt: a.x:5"}}
	head := []Finding{
		{Key: "vet: a.x: unused", Text: "vet: a.x:9: unused"},
		{Key: "fmt: a.x: rewrite  y", Text: "fmt: a.x:7"},
		{Key: "fmt: a.x: rewrite  y", Text: "fmt: a.x:8"},
		{Key: "build: b.x: undefined: z", Text: "build: b.x:1: undefined: z"},
	}
	fresh, old := Compare(head, base)
	if want := []string{"fmt: a.x:8", "build: b.x:1: undefined: z"}; !slices.Equal(Texts(fresh), want) || old != 2 {
		t.Errorf("fresh %q, old %d; want %q and 2", Texts(fresh), old, want)
	}
	if f, b := Split(head, nil); len(f) != len(head) || len(b) != 0 {
		t.Errorf("with no base, every finding is new: %d new, %d before", len(f), len(b))
	}
}
