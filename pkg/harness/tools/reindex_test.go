package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/harness/harnesstest"
)

func block(search, replace string) string {
	return "<<<<<<< SEARCH\n" + search + "=======\n" + replace + ">>>>>>> REPLACE\n"
}

// After an edit the symbol index holds that file as edited (a function the
// agent added is found, one it deleted is not), without rebuilding the
// index: a file changed behind the session's back stays as it was indexed.
func TestEditUpdatesTheIndexForThatFileOnly(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)
	wantContent(t, do(t, s, SearchMethod, SearchMethodArgs{Name: "Sub"}), false, "calc/calc.go:17-19 (func Sub)")
	wantContent(t, do(t, s, SearchMethod, SearchMethodArgs{Name: "Whisper"}), true, "No function or method named \"Whisper\"")

	// Behind the session's back: a full rebuild would see Hidden.
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"strs/hidden.go": "package strs\n\nfunc Hidden() {}\n"})

	// Added by the agent in one file, deleted in another, and a new file.
	obs := do(t, s, Edit, EditArgs{Path: "strs/strs.go", Blocks: block(
		"func Shout(s string) string { return strings.ToUpper(s) + \"!\" }\n",
		"func Shout(s string) string { return strings.ToUpper(s) + \"!\" }\n\n// Whisper lower-cases s.\nfunc Whisper(s string) string { return strings.ToLower(s) }\n")})
	wantContent(t, obs, false, "Edited strs/strs.go")
	obs = do(t, s, Edit, EditArgs{Path: "calc/calc.go", Blocks: block(
		"// Sub returns a minus b.\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n", "")})
	wantContent(t, obs, false, "Edited calc/calc.go")
	obs = do(t, s, Edit, EditArgs{Path: "calc/mul.go", Blocks: block("", "package calc\n\n// Mul multiplies.\nfunc Mul(a, b int) int { return a * b }\n")})
	wantContent(t, obs, false, "Created calc/mul.go")
	if s.idxStale {
		t.Fatal("an edit asks for a full refresh of the index")
	}

	wantContent(t, do(t, s, SearchMethod, SearchMethodArgs{Name: "Whisper"}), false, "strs/strs.go:9-9 (func Whisper)")
	wantContent(t, do(t, s, SearchMethod, SearchMethodArgs{Name: "Mul"}), false, "calc/mul.go:4-4 (func Mul)")
	if obs := do(t, s, SearchMethod, SearchMethodArgs{Name: "Sub"}); !obs.IsError || strings.Contains(obs.Content, "calc/calc.go:17") {
		t.Errorf("the deleted Sub is still found:\n%s", obs.Content)
	}
	if obs := do(t, s, SearchMethod, SearchMethodArgs{Name: "Hidden"}); !obs.IsError {
		t.Errorf("the index was rebuilt (a file no edit touched is in it):\n%s", obs.Content)
	}
	// The created file is in the session's listing too.
	wantContent(t, do(t, s, SearchCode, SearchCodeArgs{Query: "a * b"}), false, "calc/mul.go:4:")
	wantContent(t, do(t, s, FindFile, FindFileArgs{Pattern: "mul.go"}), false, "calc/mul.go")
}

// search_code answers from its text index as a search of the whole tree
// does: a fresh session's first search reads every file. The index is made
// by the first search, refreshed for a file an edit wrote, and checked
// against every file after a test run, which may write any of them.
func TestSearchCodeIndexAnswersAsAWholeSearch(t *testing.T) {
	f := harnesstest.Calc(t)
	s := newTestSession(t, f, nil)
	queries := []SearchCodeArgs{
		{Query: "Sub"}, {Query: "sub"}, {Query: "a - b"}, {Query: "return"}, {Query: "Shout"},
		{Query: "strings.ToUpper"}, {Query: "noSuchNameQzx"}, {Query: "calc test"},
		{Query: `func \w+\(`, Regex: true}, {Query: `(?i)WANT`, Regex: true},
	}
	same := func(stage string) {
		t.Helper()
		fresh := newTestSession(t, f, nil)
		for _, q := range queries {
			want := do(t, fresh, SearchCode, q)
			if got := do(t, s, SearchCode, q); got.Content != want.Content {
				t.Errorf("%s, %+v: the index answers\n%s\na whole search\n%s", stage, q, got.Content, want.Content)
			}
		}
	}
	same("cold")
	same("warm")
	if s.text == nil || s.text.Len() == 0 {
		t.Fatal("search_code made no index")
	}

	obs := do(t, s, Edit, EditArgs{Path: "strs/strs.go", Blocks: block(
		"func Shout(s string) string { return strings.ToUpper(s) + \"!\" }\n",
		"func Shout(s string) string { return strings.ToUpper(s) + \"!\" }\n\n// Whisper lower-cases s; not Sub.\nfunc Whisper(s string) string { return strings.ToLower(s) }\n")})
	wantContent(t, obs, false, "Edited strs/strs.go")
	queries = append(queries, SearchCodeArgs{Query: "Whisper"})
	same("after an edit")
	wantContent(t, do(t, s, SearchCode, SearchCodeArgs{Query: "Whisper"}), false, "strs/strs.go:9:")

	// A test run may write files: the next search checks them.
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"calc/calc.go": harnesstest.CalcGood["calc/calc.go"] + "\n// WrittenByATest\n"})
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(f.WS.Dir, "calc/calc.go"), later, later); err != nil {
		t.Fatal(err)
	}
	wantContent(t, do(t, s, RunTests, RunTestsArgs{Tests: []string{"TestAdd"}}), false)
	queries = append(queries, SearchCodeArgs{Query: "WrittenByATest"})
	same("after a test run")
	wantContent(t, do(t, s, SearchCode, SearchCodeArgs{Query: "WrittenByATest"}), false, "calc/calc.go:")
}
