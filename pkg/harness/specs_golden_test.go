package harness

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/python"
)

var updateSpecs = flag.Bool("update-specs", false, "rewrite testdata/specs from the tools as they are")

// TestSpecsGolden holds the tools as each language's policy sees them
// (names, descriptions, parameters) and `worker tool --list` to the bytes
// in testdata/specs: a change to what the model is told shows in a diff.
func TestSpecsGolden(t *testing.T) {
	log := zaptest.NewLogger(t)
	plain := New(Config{}, nil, testRunner(), nil, log)
	for name, specs := range map[string][]ToolSpec{
		"plain":  plain.specs(),
		"go":     plain.WithLanguage(golang.Driver{}).specs(),
		"python": plain.WithLanguage(python.Driver{}).specs(),
		"node":   plain.WithLanguage(node.Driver{}).specs(),
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
