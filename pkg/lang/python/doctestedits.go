package python

import (
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
)

// EmbeddedTestEdits names the doctest lines of the code file f that the
// patch changes or removes: an example (">>> ", "... ") or its expected
// output, in the file as it was before the patch (read from the checkout
// at dir, the patch undone). A doctest is a test, collected by pytest with
// --doctest-modules and named "file::dotted.name": what it expects is what
// the tests demand, as test data's is. Examples the patch adds are not
// named.
func (d Driver) EmbeddedTestEdits(dir string, f unidiff.File) []string {
	if f.OldPath == "" || !strings.HasSuffix(f.OldPath, ".py") || d.IsTestFile(f.OldPath) {
		return nil
	}
	before, _, ok := gaterules.Sides(dir, f)
	if !ok {
		return nil
	}
	doc := doctestLines(strings.Split(string(before), "\n"))
	var bad []string
	for _, l := range f.Changes() {
		if l.Kind != '-' || !doc[l.OldLine] {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s:%d: changes a doctest's %q (what the tests demand, as test data's expected output is)", f.OldPath, l.OldLine, strings.TrimSpace(l.Text)))
	}
	return bad
}

// doctestLines are the 1-based numbers of the lines that belong to a
// doctest's examples: a prompt (">>> "), its continuations ("... ") and
// the expected output after them, up to a blank line, the next prompt or
// the docstring's end.
func doctestLines(lines []string) map[int]bool {
	out := map[int]bool{}
	in := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == ">>>" || strings.HasPrefix(t, ">>> "):
			in = true
		case !in, t == "", strings.HasPrefix(t, `"""`), strings.HasPrefix(t, `'''`):
			in = false
			continue
		}
		out[i+1] = true
	}
	return out
}
