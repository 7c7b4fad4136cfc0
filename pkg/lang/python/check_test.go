package python

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/findings"
)

// Check reports what compile() and pyflakes say, keyed without line
// numbers: against the base checkout, an edit that moves old findings
// down brings only its own.
func TestCheckReportsOnlyNewFindings(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	dir := repo(t, map[string]string{
		"calc.py": "import os\n\n\ndef add(a, b):\n    return a + b\n",
		"ok.py":   "def f():\n    return 1\n",
	})
	base, err := d.Check(ctx, dir, []string{"calc.py", "ok.py", "README.md", "missing.py"})
	if err != nil {
		t.Fatal(err)
	}
	if len(base) != 1 || base[0].Key != "pyflakes: calc.py: 'os' imported but unused" || !strings.Contains(base[0].Text, "calc.py:1") {
		t.Fatalf("base findings = %+v", base)
	}
	// The edit moves the old import down two lines and adds an undefined
	// name; a second file gets a syntax error.
	writeTree(t, dir, map[string]string{
		"calc.py": "\"\"\"Calc.\"\"\"\n\nimport os\n\n\ndef add(a, b):\n    return a + b + c\n",
		"ok.py":   "def f(:\n    return 1\n",
	})
	head, err := d.Check(ctx, dir, []string{"calc.py", "ok.py"})
	if err != nil {
		t.Fatal(err)
	}
	fresh, old := findings.Compare(head, base)
	if old != 1 || len(fresh) != 2 {
		t.Fatalf("fresh %+v, old %d (head %+v)", fresh, old, head)
	}
	keys := []string{fresh[0].Key, fresh[1].Key}
	for _, want := range []string{"compile: ok.py: SyntaxError: ", "pyflakes: calc.py: undefined name 'c'"} {
		if !contains(keys, want) {
			t.Errorf("no fresh finding %q in %q", want, keys)
		}
	}
	for _, f := range head {
		if strings.ContainsAny(strings.TrimPrefix(f.Key, "pyflakes: "), "0123456789") {
			t.Errorf("a key holds a number (a line?): %q", f.Key)
		}
	}
	if !contains([]string{fresh[0].Text, fresh[1].Text}, "ok.py:1: SyntaxError") {
		t.Errorf("the syntax error's text has no line: %+v", fresh)
	}
}

func TestLinelessKeys(t *testing.T) {
	t.Parallel()
	got := pyflakesFindings("calc.py:9:1: redefinition of unused 'x' from line 3\nother.py:1:1: not ours\ncalc.py:2: 'os' imported but unused\n", []string{"calc.py"})
	if len(got) != 2 || got[0].Key != "pyflakes: calc.py: redefinition of unused 'x' from line N" || got[0].Text != "pyflakes: calc.py:9: redefinition of unused 'x' from line 3" ||
		got[1].Key != "pyflakes: calc.py: 'os' imported but unused" {
		t.Errorf("findings = %+v", got)
	}
}
