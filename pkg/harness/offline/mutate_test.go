package offline

import "testing"

func TestMutations(t *testing.T) {
	cases := []struct {
		line string
		want []string // some of the mutated lines expected
		not  []string
	}{
		{"\tfor i := lo; i <= hi; i++ {", []string{"\tfor i := lo; i < hi; i++ {", "\tfor i := lo; i <= hi; i-- {"}, nil},
		{"\treturn a - b", []string{"\treturn a + b"}, nil},
		{"\treturn xs[len(xs)-1]", []string{"\treturn xs[len(xs)]", "\treturn xs[len(xs)-2]", "\treturn xs[len(xs)+1]"}, nil},
		{"\tif ok && n > 0 {", []string{"\tif ok || n > 0 {", "\tif ok && n >= 0 {", "\tif !(ok && n > 0) {", "\tif ok && n > 1 {"}, nil},
		{"\tif !done {", []string{"\tif done {"}, []string{"\tif !!done {"}},
		{"\treturn x * 2", []string{"\treturn x / 2", "\treturn x * 3", "\treturn x * 1"}, nil},
		{"\ts := \"a\" + name", nil, []string{"\ts := \"a\" - name"}},
		{"\tn := -1", []string{"\tn := -2", "\tn := -0"}, []string{"\tn := +1"}},
		{"\treturn xs[i]", []string{"\treturn xs[i-1]", "\treturn xs[i+1]"}, nil},
		{"\tvar m map[string]int", nil, []string{"\tvar m map[string-1]int"}},
		{"func f(x *T, n int) bool {", nil, []string{"func f(x /T, n int) bool {"}},
		{"\t// if a < b {", nil, []string{"\t// if a <= b {"}},
		{"\tmsg := \"a < b\"", nil, []string{"\tmsg := \"a <= b\""}},
	}
	for _, tc := range cases {
		got := map[string]bool{}
		for _, m := range mutationsIn("x.go", tc.line) {
			got[m.New] = true
		}
		for _, w := range tc.want {
			if !got[w] {
				t.Errorf("Mutations(%q) lacks %q; got %q", tc.line, w, keys(got))
			}
		}
		for _, n := range tc.not {
			if got[n] {
				t.Errorf("Mutations(%q) has %q", tc.line, n)
			}
		}
	}
	// The boundary flip is the most likely mutation of a comparison.
	ms := mutationsIn("x.go", "\tif i <= n {")
	if ms[0].Template != TplBoundary || ms[0].New != "\tif i < n {" {
		t.Errorf("first mutation = %+v", ms[0])
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The swapped-arguments template, in each language: a call's two simple
// arguments change places; a declaration's parameters and a call whose
// arguments are expressions do not.
func TestSwapArgs(t *testing.T) {
	for _, c := range []struct {
		path, line, want string
	}{
		{"a.go", "\treturn Percent(total, done)", "\treturn Percent(done, total)"},
		{"a.py", "    return percent(total, done)", "    return percent(done, total)"},
		{"a.ts", "  return percent(total, done);", "  return percent(done, total);"},
		{"a.go", "func Percent(part, whole int) int {", ""},
		{"a.py", "def percent(part, whole):", ""},
		{"a.go", "\treturn Percent(total-1, done)", ""},
	} {
		var got []string
		for _, m := range mutationsIn(c.path, c.line) {
			if m.Template == TplSwapArgs {
				got = append(got, m.New)
			}
		}
		if c.want == "" && len(got) > 0 || c.want != "" && (len(got) != 1 || got[0] != c.want) {
			t.Errorf("%s %q: swaps %q, want %q", c.path, c.line, got, c.want)
		}
	}
}
