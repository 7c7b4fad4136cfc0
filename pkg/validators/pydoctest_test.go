package validators

import (
	"strings"
	"testing"
)

// pyDoc is a module of the calc project with a doctest: pytest collects
// it as "calc/doc.py::calc.doc.price" under --doctest-modules.
const pyDoc = `"""Prices."""


def price(qty):
    """The price of qty units.

    >>> price(9)
    9000
    >>> price(10)
    9000
    """
    if qty > 10:
        return qty * 900
    return qty * 1000
`

// A doctest is a test in a code file: a patch that changes its example or
// its expected output is refused, whatever the policy on test edits, as a
// change to test data is; the code's fix beside it, or a new example, is
// not.
func TestPythonDoctestEdits(t *testing.T) {
	t.Parallel()
	fixed := strings.Replace(pyDoc, "if qty > 10:", "if qty >= 10:", 1)
	for _, c := range []struct {
		name   string
		src    string
		detail []string // empty: integrity passes
	}{
		{name: "the code fixed", src: fixed},
		{name: "an example added", src: strings.Replace(fixed, "    >>> price(9)\n", "    >>> price(1)\n    1000\n    >>> price(9)\n", 1)},
		{name: "the expected output changed", src: strings.Replace(pyDoc, "    >>> price(10)\n    9000\n", "    >>> price(10)\n    10000\n", 1),
			detail: []string{`calc/doc.py:10: changes a doctest's "9000"`}},
		{name: "the example changed", src: strings.Replace(pyDoc, ">>> price(10)", ">>> price(9)", 1),
			detail: []string{`calc/doc.py:9: changes a doctest's ">>> price(10)"`}},
		{name: "the example removed", src: strings.Replace(pyDoc, "    >>> price(10)\n    9000\n", "", 1),
			detail: []string{`calc/doc.py:9: changes a doctest's ">>> price(10)"`, `calc/doc.py:10: changes a doctest's "9000"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newPyFixture(t)
			write(t, f.repo.Dir, map[string]string{"calc/doc.py": pyDoc})
			base, err := f.repo.CommitAll(t.Context(), "calc: prices")
			if err != nil {
				t.Fatal(err)
			}
			f.base = base
			in := f.pyInput(t, map[string]string{"calc/doc.py": c.src})
			g, err := New(Config{AllowTestEdits: true}, nil).integrity(t.Context(), &candidate{in: in, lang: in.Lang, files: mustParse(t, in.Patch)})
			if err != nil {
				t.Fatal(err)
			}
			wantIntegrity(t, g, c.detail)
		})
	}
}
