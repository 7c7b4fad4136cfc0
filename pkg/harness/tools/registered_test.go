package tools

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/python"
)

var toolName = regexp.MustCompile(`^[a-z][a-z_]*[a-z]$`)

// checkTool is what a registered tool must be: made by Define, described
// in every language's words, its schema an object whose properties are its
// argument struct's shown fields, each described, and whose required
// fields are exactly those without omitempty. It reads the struct itself,
// not through schemaOf, and returns what is wrong.
func checkTool(tl Tool) []string {
	var bad []string
	if !toolName.MatchString(tl.name) {
		bad = append(bad, "a name like read_file")
	}
	if tl.run == nil || tl.desc == nil || tl.args == nil || tl.params == nil {
		return append(bad, "not made by Define: no handler, description or schema")
	}
	for _, l := range []Language{nil, golang.Driver{}, python.Driver{}, node.Driver{}} {
		if d := Specs([]Tool{tl}, l)[0].Description; len(d) < 20 || strings.Contains(d, "<no value>") {
			bad = append(bad, "a description in every language's words")
		}
	}
	sp := tl.Spec(neutralWords)
	p := sp.Parameters
	if p["type"] != "object" || p["additionalProperties"] != false {
		bad = append(bad, "parameters that are a closed object")
	}
	props, _ := p["properties"].(map[string]any)
	var fields, required []string
	for i := 0; i < tl.args.NumField(); i++ {
		f := tl.args.Field(i)
		if f.Tag.Get("schema") == "-" {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		fields = append(fields, name)
		if !strings.Contains(","+opts+",", ",omitempty,") {
			required = append(required, name)
		}
		if d, _ := props[name].(map[string]any)["description"].(string); d == "" {
			bad = append(bad, "a description of the parameter "+name)
		}
	}
	shown := make([]string, 0, len(props))
	for k := range props {
		shown = append(shown, k)
	}
	slices.Sort(shown)
	slices.Sort(fields)
	if !slices.Equal(shown, fields) {
		bad = append(bad, "the parameters "+strings.Join(fields, ", ")+", not "+strings.Join(shown, ", "))
	}
	got, _ := p["required"].([]string)
	if !slices.Equal(got, required) {
		bad = append(bad, "required "+strings.Join(required, ", ")+", not "+strings.Join(got, ", "))
	}
	return bad
}

// TestRegistered: every registered tool is a whole tool, registered once,
// and described to the policies in the order of the list (which tools, in
// which order, the golden files of TestSpecsGolden hold).
func TestRegistered(t *testing.T) {
	seen := map[string]bool{}
	for _, tl := range All() {
		if seen[tl.name] {
			t.Errorf("%s is registered twice", tl.name)
		}
		seen[tl.name] = true
		for _, b := range checkTool(tl) {
			t.Errorf("%s wants %s", tl.name, b)
		}
	}
	for i, sp := range Specs(All(), nil) {
		if sp.Name != All()[i].name || sp.Kind != All()[i].kind {
			t.Errorf("spec %d = %s, %d", i, sp.Name, sp.Kind)
		}
	}
}

// TestCheckToolFindsBrokenTools: the registry's check fails for a tool
// that is not one: no schema or description, required fields that are
// not its struct's, a parameter without a description.
func TestCheckToolFindsBrokenTools(t *testing.T) {
	type args struct {
		Path string `json:"path" description:"A file."`
		Line int    `json:"line,omitempty" description:"A line."`
	}
	run := func(*Session, context.Context, args) (Observation, error) { return Observation{}, nil }
	good := Define("look_here", KindOther, "Look at a line of a file, as the tests of this package do.", run)
	if bad := checkTool(good); len(bad) > 0 {
		t.Fatalf("a whole tool: %v", bad)
	}
	noRequired := good
	noRequired.params = copyMap(good.params)
	delete(noRequired.params, "required")
	wrongRequired := good
	wrongRequired.params = copyMap(good.params)
	wrongRequired.params["required"] = []string{"path", "line"}
	undescribed := good
	undescribed.params = copyMap(good.params)
	delete(undescribed.params["properties"].(map[string]any)["line"].(map[string]any), "description")
	extra := good
	extra.params = copyMap(good.params)
	extra.params["properties"].(map[string]any)["column"] = map[string]any{"type": "integer", "description": "A column."}
	for name, tl := range map[string]Tool{
		"a tool not made by Define": {name: "bare"},
		"no required fields":        noRequired,
		"required fields too many":  wrongRequired,
		"a parameter undescribed":   undescribed,
		"a parameter of no field":   extra,
	} {
		if bad := checkTool(tl); len(bad) == 0 {
			t.Errorf("%s: the check passes", name)
		}
	}
}

// TestOneFilePerTool: each registered tool is <name>.go and its
// description <name>.md, and no description lies about for a tool that is
// not registered.
func TestOneFilePerTool(t *testing.T) {
	for _, tl := range All() {
		for _, f := range []string{tl.name + ".go", tl.name + ".md"} {
			if _, err := os.Stat(f); err != nil {
				t.Errorf("%s: %v", tl.name, err)
			}
		}
	}
	mds, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range mds {
		if _, ok := lookup(All(), strings.TrimSuffix(md, ".md")); !ok {
			t.Errorf("%s describes no registered tool", md)
		}
	}
}

// TestDefineRefuses: an argument struct the schema cannot describe, and a
// description that does not render, stop the program where the tool is
// defined.
func TestDefineRefuses(t *testing.T) {
	type undescribed struct {
		Path string `json:"path"`
	}
	type described struct {
		Path string `json:"path" description:"A file."`
	}
	for name, define := range map[string]func(){
		"a field without a description": func() {
			Define("x", KindOther, "X.", func(*Session, context.Context, undescribed) (Observation, error) { return Observation{}, nil })
		},
		"arguments that are no struct": func() {
			Define("x", KindOther, "X.", func(*Session, context.Context, string) (Observation, error) { return Observation{}, nil })
		},
		"a word no language has": func() {
			Define("x", KindOther, "X in {{.Dialect}}.", func(*Session, context.Context, described) (Observation, error) { return Observation{}, nil })
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: defined", name)
				}
			}()
			define()
		}()
	}
}
