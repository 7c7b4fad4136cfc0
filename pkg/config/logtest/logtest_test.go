package logtest

import (
	"slices"
	"testing"
)

// The walk finds keys repeated in an object at any depth, and not keys
// that merely repeat across objects.
func TestDuplicateKeys(t *testing.T) {
	cases := []struct {
		line string
		want []string
	}{
		{`{"msg":"job started","attempt":2,"attempt":2}`, []string{"attempt"}},
		{`{"a":1,"job":{"id":"x","id":"y"},"list":[{"k":1,"k":2}]}`, []string{"job.id", "list[0].k"}},
		{`{"a":{"x":1},"b":{"x":1},"c":[1,"x",null,true]}`, nil},
		{`{"msg":"ok"}`, nil},
	}
	for _, c := range cases {
		got, err := DuplicateKeys([]byte(c.line))
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("DuplicateKeys(%s) = %v, %v; want %v", c.line, got, err, c.want)
		}
	}
	for _, bad := range []string{`{"a":`, `{"a":1}{"b":2}`, `not json`} {
		if _, err := DuplicateKeys([]byte(bad)); err == nil {
			t.Errorf("DuplicateKeys(%s): no error", bad)
		}
	}
}
