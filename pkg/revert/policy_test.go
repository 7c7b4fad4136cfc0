package revert

import (
	"reflect"
	"testing"
	"time"
)

// A repository's policy only narrows the central one.
func TestNarrowedByTheRepository(t *testing.T) {
	central := NewPolicy(true, 24*time.Hour, 0.9, nil)
	for _, c := range []struct {
		name string
		repo *Repo
		want Policy
	}{
		{"none", nil, central},
		{"off", &Repo{Enabled: false}, Policy{Enabled: false, MaxAge: 24 * time.Hour, MinConfidence: 0.9}},
		{"younger", &Repo{Enabled: true, MaxAge: time.Hour, FirstPaths: []string{"db/**"}}, Policy{Enabled: true, MaxAge: time.Hour, MinConfidence: 0.9, FirstPaths: []string{"db/**"}}},
		{"older is held", &Repo{Enabled: true, MaxAge: 72 * time.Hour}, Policy{Enabled: true, MaxAge: 24 * time.Hour, MinConfidence: 0.9}},
	} {
		if got := central.Narrowed(c.repo); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if NewPolicy(false, time.Hour, 0.9, nil).Narrowed(&Repo{Enabled: true}).Enabled {
		t.Error("a repository turned reverts on that the central configuration turned off")
	}
}
