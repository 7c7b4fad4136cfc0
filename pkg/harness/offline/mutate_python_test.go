package offline

import (
	"fmt"
	"testing"
)

func TestMutationsPython(t *testing.T) {
	cases := []struct {
		line string
		want []string // some of the mutated lines expected
		not  []string
	}{
		{"            if qty > t.min_qty:", []string{"            if qty >= t.min_qty:", "            if qty < t.min_qty:"}, nil},
		{"    if ok and n > 0:", []string{"    if ok or n > 0:", "    if ok and n >= 0:", "    if not (ok and n > 0):", "    if ok and n > 1:"}, []string{"    if ok || n > 0:"}},
		{"    if not done:  # finished?", []string{"    if done:  # finished?"}, nil},
		{"    return x in seen and y not in seen", []string{"    return x in seen and y in seen", "    return x in seen or y not in seen"}, nil},
		{"    return total - total * pct // 100", []string{"    return total + total * pct // 100", "    return total - total * pct * 100", "    return total - total / pct // 100"}, nil},
		{"    return xs[len(xs)-1]", []string{"    return xs[len(xs)]", "    return xs[len(xs)-2]"}, nil},
		{"    return xs[i]", []string{"    return xs[i-1]", "    return xs[i+1]"}, nil},
		{"    done = False", []string{"    done = True"}, []string{"    done = true"}},
		{"    return -1", []string{"    return -2"}, []string{"    return +1"}},
		{`    msg = f"a < {b}" + name`, nil, []string{`    msg = f"a <= {b}" + name`, `    msg = f"a < {b}" - name`}},
		{`    msg = 'it''s < 2' if x else "y"`, nil, []string{`    msg = 'it''s <= 2' if x else "y"`}},
		{"    # if a < b:", nil, []string{"    # if a <= b:"}},
		{`    """A docstring that goes on`, nil, nil},
		{"def quote(self, sku, qty=1):", []string{"def quote(self, sku, qty=2):"}, []string{"def quote(self, sku, qty=1);"}},
		{"from shop import a < b", nil, nil},
		{"    x = y ** 2", []string{"    x = y ** 3"}, []string{"    x = y */ 2"}},
		{"    while n != 0:", []string{"    while n == 0:"}, nil},
	}
	for _, tc := range cases {
		got := map[string]bool{}
		for _, m := range mutationsIn("shop/x.py", tc.line) {
			got[m.New] = true
		}
		for _, w := range tc.want {
			if !got[w] {
				t.Errorf("mutationsIn(%q) lacks %q; got %q", tc.line, w, keys(got))
			}
		}
		for _, n := range tc.not {
			if got[n] {
				t.Errorf("mutationsIn(%q) has %q", tc.line, n)
			}
		}
		if tc.want == nil && len(got) > 0 && tc.not == nil {
			t.Errorf("mutationsIn(%q) = %q, want none", tc.line, keys(got))
		}
	}
	// The boundary flip comes first, and the operator is Python's.
	ms := mutationsIn("shop/x.py", "        if qty > t.min_qty:")
	if ms[0].Template != TplBoundary || ms[0].New != "        if qty >= t.min_qty:" {
		t.Errorf("first mutation = %+v", ms[0])
	}
	if got := mutationsIn("notes.txt", "a < b"); got != nil {
		t.Errorf("a text file got mutations: %+v", got)
	}
}

func TestPyFuncSpan(t *testing.T) {
	src := `class Catalog:
    rate = 1

    def discount(self, qty):
        for t in self.tiers:

            if qty > t.min_qty:
                return t.percent_off
        return 0

    @property
    def size(self):
        def inner():
            return 1
        return inner()


def quote(c, qty):
    return c.discount(qty)
`
	f := modelOf("shop/pricing.py", src)
	for n, want := range map[int]string{4: "discount:4-9", 7: "discount:4-9", 9: "discount:4-9", 14: "inner:13-14", 15: "size:12-15", 19: "quote:18-19"} {
		s, e, name, ok := f.funcSpan(n)
		if got := fmt.Sprintf("%s:%d-%d", name, s, e); !ok || got != want {
			t.Errorf("line %d: %s (%v), want %s", n, got, ok, want)
		}
	}
	for _, n := range []int{1, 2, 11, 17} {
		if s, e, name, ok := f.funcSpan(n); ok {
			t.Errorf("line %d is in %s %d-%d", n, name, s, e)
		}
	}
	funcs := f.funcs()
	if funcs["discount"] != [2]int{4, 9} || funcs["quote"] != [2]int{18, 19} {
		t.Errorf("funcs = %v", funcs)
	}
}
