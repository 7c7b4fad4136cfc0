package tools

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/python"
)

var updateSpecs = flag.Bool("update-specs", false, "rewrite testdata/specs from the tools as they are")

// TestSpecsGolden holds the tools as each language's policy sees them
// (names, descriptions, parameters) and `worker tool --list` to the bytes
// in testdata/specs: a change to what the model is told shows in a diff.
func TestSpecsGolden(t *testing.T) {
	for name, specs := range map[string][]Spec{
		"plain":  Specs(All(), nil),
		"go":     Specs(All(), golang.Driver{}),
		"python": Specs(All(), python.Driver{}),
		"node":   Specs(All(), node.Driver{}),
	} {
		got, err := json.MarshalIndent(specs, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden(t, name+".json", append(got, '\n'))
	}
	golden(t, "usage.txt", []byte(Usage()))
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "specs", name)
	if *updateSpecs {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update-specs to write it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s changed: rerun with -update-specs if the change is meant, and review the diff\ngot:\n%s", path, got)
	}
}
