package python

import "testing"

func TestScanPython(t *testing.T) {
	toks, ok := scanPython(`x = rb'\x00' + 0x1F + 1e-3 + 2j  # c`)
	if !ok {
		t.Fatal("did not scan")
	}
	var lits []string
	for _, tk := range toks {
		lits = append(lits, tk.Tok.String()+":"+`x = rb'\x00' + 0x1F + 1e-3 + 2j  # c`[tk.Off:tk.End])
	}
	want := []string{"IDENT:x", "=:=", "STRING:rb'\\x00'", "+:+", "INT:0x1F", "+:+", "FLOAT:1e-3", "+:+", "FLOAT:2j", "COMMENT:# c"}
	if len(lits) != len(want) {
		t.Fatalf("tokens = %q, want %q", lits, want)
	}
	for i := range want {
		if lits[i] != want[i] {
			t.Errorf("token %d = %q, want %q", i, lits[i], want[i])
		}
	}
	for _, bad := range []string{`s = """starts here`, "x = a ! b", "y = `x`"} {
		if _, ok := scanPython(bad); ok {
			t.Errorf("scanPython(%q) scanned", bad)
		}
	}
}

// shownLines are a file's lines, every one shown.
type shownLines []string

func (l shownLines) Line(n int) (string, bool) {
	if n < 1 || n > len(l) {
		return "", false
	}
	return l[n-1], true
}

func (l shownLines) Len() int { return len(l) }

// A docstring's lines, its doctest's examples and their expected output
// included, are not code the templates repair; the code around them is,
// a line with a one-line string on it too.
func TestPyCodeLeavesDocstringsAlone(t *testing.T) {
	t.Parallel()
	src := []string{
		`"""Prices.`,            // 1: opens the module's docstring
		``,                      // 2
		`>>> price(10)`,         // 3
		`"""`,                   // 4: closes it
		`def price(qty):`,       // 5
		`    r"""The price.`,    // 6: opens a raw docstring
		`    >>> price(10)`,     // 7
		`    9000`,              // 8
		`    """`,               // 9
		`    if qty > 10:`,      // 10
		`        s = """x"""`,   // 11: opens and closes
		`    # not a """ quote`, // 12
		`    return qty - 1`,    // 13
	}
	code := map[int]bool{5: true, 10: true, 11: true, 12: true, 13: true}
	for n := 1; n <= len(src); n++ {
		if got := pyCode(shownLines(src), n, new(any)); got != code[n] {
			t.Errorf("line %d %q: pyCode = %v, want %v", n, src[n-1], got, code[n])
		}
	}
}
