package harness

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestSpecs(t *testing.T) {
	specs := Specs()
	if len(specs) != 15 {
		t.Fatalf("%d tools, want 15", len(specs))
	}
	seen := map[string]bool{}
	for _, sp := range specs {
		if seen[sp.Name] || sp.Description == "" || sp.Parameters["type"] != "object" {
			t.Errorf("bad spec %+v", sp)
		}
		seen[sp.Name] = true
	}
	for _, name := range []string{ActExit, ActGetDiffDetails, ActGetTaskDetails, ActReadDirectory, ActReadFile, ActFindFile, ActGoToLine,
		ActSearchCode, ActSearchCodeInFile, ActSearchClass, ActSearchMethod, ActSearchMethodInFile, ActSearchMethodInClass, ActRunTests, ActEdit} {
		if !seen[name] {
			t.Errorf("no spec for %s", name)
		}
	}
}

// TestSpecsMatchArgs checks each tool's parameters against the JSON names of
// the argument struct the tool decodes.
func TestSpecsMatchArgs(t *testing.T) {
	args := map[string]any{
		ActExit: ExitArgs{}, ActGetDiffDetails: DiffArgs{}, ActGetTaskDetails: struct{}{}, ActReadDirectory: PathArgs{},
		ActReadFile: ReadFileArgs{}, ActFindFile: FindFileArgs{}, ActGoToLine: GoToLineArgs{}, ActSearchCode: SearchCodeArgs{},
		ActSearchCodeInFile: SearchCodeArgs{}, ActSearchClass: NameArgs{}, ActSearchMethod: NameArgs{}, ActSearchMethodInFile: NameArgs{},
		ActSearchMethodInClass: NameArgs{}, ActRunTests: RunTestsArgs{}, ActEdit: EditArgs{},
	}
	for _, sp := range Specs() {
		typ := reflect.TypeOf(args[sp.Name])
		if typ == nil {
			t.Errorf("%s: no argument struct", sp.Name)
			continue
		}
		fields := map[string]bool{}
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			fields[name] = true
		}
		props := sp.Parameters["properties"].(map[string]any)
		for p := range props {
			if !fields[p] {
				t.Errorf("%s: parameter %q is no field of %s", sp.Name, p, typ)
			}
		}
		req, _ := sp.Parameters["required"].([]string)
		for _, r := range req {
			if _, ok := props[r]; !ok {
				t.Errorf("%s: required %q is not a parameter", sp.Name, r)
			}
		}
		if _, err := json.Marshal(sp); err != nil {
			t.Errorf("%s: %v", sp.Name, err)
		}
	}
}
