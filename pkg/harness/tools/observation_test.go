package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/harness/harnesstest"
)

// When the loop cuts an observation to its limit, the structured parts keep
// exactly the items Content still shows whole: none the cut took, whole or
// in part, and every other one.
func TestClipKeepsTheItemsShownWhole(t *testing.T) {
	f := harnesstest.Calc(t)
	var wide, wider, many, dups strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&wide, "// line %d %s\n", i, strings.Repeat("w", 300))
		// Lines too long for the cuts to fall at a line's end.
		fmt.Fprintf(&wider, "// line %d %s\n", i, strings.Repeat("v", 580))
	}
	files := map[string]string{"wide/wide.txt": wide.String(), "wide/wider.txt": wider.String()}
	for i := 1; i <= 150; i++ {
		files[fmt.Sprintf("many/file%03d_%s.go", i, strings.Repeat("x", 40))] = "package many\n"
	}
	dups.WriteString("package dup\n")
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&dups, "\ntype T%03d struct{}\n\nfunc (T%03d) Dup(needle int) int { return needle * %d }\n", i, i, i)
	}
	files["dup/dup.go"] = dups.String()
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&many, "needle %03d %s\n", i, strings.Repeat("n", 60))
	}
	files["many/needles.txt"] = many.String()
	harnesstest.WriteFiles(t, f.WS.Dir, files)

	const limit = 3000
	listed := func(o Observation) []string {
		var out []string
		for _, l := range o.Listing.Lines {
			out = append(out, fmt.Sprintf("\n%6d\t%s\n", l.N, l.Text))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		tool  string
		args  any
		items func(Observation) []string // each item as Content shows it
	}{
		{"listing", GoToLine, GoToLineArgs{Path: "wide/wide.txt", Line: 30}, listed},
		{"listing cut inside lines", GoToLine, GoToLineArgs{Path: "wide/wider.txt", Line: 30}, listed},
		{"find", FindFile, FindFileArgs{Pattern: "many/*.go"}, func(o Observation) []string {
			var out []string
			for _, f := range o.Find.Files {
				out = append(out, "\n"+f+"\n")
			}
			return out
		}},
		{"search", SearchCodeInFile, SearchCodeInFileArgs{Query: "needle", Path: "many/needles.txt"}, func(o Observation) []string {
			var out []string
			for _, h := range o.Search.Hits {
				out = append(out, fmt.Sprintf("\n%s:%d: %s\n", h.File, h.Line, h.Text))
			}
			return out
		}},
		{"symbols", SearchMethod, SearchMethodArgs{Name: "Dup"}, func(o Observation) []string {
			var out []string
			for _, s := range o.Symbols.Symbols {
				if strings.Contains(o.Content, "\n"+s.Location()+"-") {
					out = append(out, fmt.Sprintf("\n%s-%d (%s %s)\n", s.Location(), s.EndLine, s.Kind, s.QualifiedName()))
				} else {
					out = append(out, fmt.Sprintf("\n%s: %s\n", s.Location(), s.Signature))
				}
			}
			return out
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSession(t, f, nil)
			obs, err := s.Execute(context.Background(), tc.tool, raw(tc.args))
			if err != nil || obs.IsError {
				t.Fatalf("%s: %v %s", tc.tool, err, obs.Content)
			}
			before := tc.items(obs)
			if len(obs.Content) <= limit || len(before) < 10 {
				t.Fatalf("%d items in %d characters: too few to cut", len(before), len(obs.Content))
			}
			obs.Clip(limit)
			after := tc.items(obs)
			if !strings.Contains(obs.Content, "characters omitted") {
				t.Fatalf("not cut:\n%s", obs.Content)
			}
			kept := map[string]bool{}
			for _, it := range after {
				kept[it] = true
			}
			for _, it := range before {
				if shown := strings.Contains(obs.Content, it); shown != kept[it] {
					t.Errorf("item %q: shown whole %v, kept %v", it, shown, kept[it])
				}
			}
			if len(after) == 0 || len(after) == len(before) {
				t.Errorf("%d of %d items kept", len(after), len(before))
			}
		})
	}
}
