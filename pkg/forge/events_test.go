package forge_test

import (
	"testing"

	"github.com/redfix/redfix/pkg/forge"
)

func TestIsCommand(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{"/redfix retry", true},
		{"/redfix", true},
		{"  /redfix explain\r\nplease", true},
		{"/redfix\trevise also the negative case", true},
		{"/redfixes are great", false},
		{"please /redfix retry", false},
		{"\n/redfix retry", false}, // the first line only
		{"> /redfix retry", false}, // a quote of someone's command
		{"", false},
	} {
		if got := forge.IsCommand(tc.body); got != tc.want {
			t.Errorf("IsCommand(%q) = %v, want %v", tc.body, got, tc.want)
		}
	}
}
