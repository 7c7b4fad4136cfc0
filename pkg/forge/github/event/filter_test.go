package event

import (
	"slices"
	"testing"
)

func TestFilterNames(t *testing.T) {
	f := Filter{
		Allow:        []string{"acme/*", "acme/widgets"},
		Repositories: []Repository{{Name: "acme/gears"}, {Name: "acme/widgets"}},
	}
	if got, want := f.Names(), []string{"acme/*", "acme/widgets", "acme/gears", "acme/widgets"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	// The allowlist is not changed through the names.
	names := f.Names()
	names[0] = "changed"
	if f.Allow[0] != "acme/*" {
		t.Errorf("Names shares the allowlist's array: %v", f.Allow)
	}
	if got := (Filter{}).Names(); len(got) != 0 {
		t.Errorf("an empty filter names %v", got)
	}
}
