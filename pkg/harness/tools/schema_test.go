package tools

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestSchemaOf: the schema a policy is given of an argument struct.
func TestSchemaOf(t *testing.T) {
	type args struct {
		Path   string   `json:"path" description:"A file."`
		Line   int      `json:"line" description:"A line."`
		Tests  []string `json:"tests,omitempty" description:"Tests."`
		Regex  bool     `json:"regex,omitempty" description:"A regex."`
		Hidden string   `json:"hidden,omitempty" schema:"-"`
		inner  string
	}
	got, err := schemaOf(reflect.TypeFor[args]())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"additionalProperties":false,"properties":{"line":{"description":"A line.","type":"integer"},` +
		`"path":{"description":"A file.","type":"string"},"regex":{"description":"A regex.","type":"boolean"},` +
		`"tests":{"description":"Tests.","items":{"type":"string"},"type":"array"}},"required":["path","line"],"type":"object"}`
	if string(b) != want {
		t.Errorf("schema\n%s\nwant\n%s", b, want)
	}
	// Without required fields there is no "required".
	got, _ = schemaOf(reflect.TypeFor[struct{}]())
	if b, _ := json.Marshal(got); string(b) != `{"additionalProperties":false,"properties":{},"type":"object"}` {
		t.Errorf("no arguments: %s", b)
	}
	for name, typ := range map[string]reflect.Type{
		"no json name": reflect.TypeFor[struct{ Path string }](),
		"a map": reflect.TypeFor[struct {
			M map[string]int `json:"m" description:"M."`
		}](),
		"not a struct": reflect.TypeFor[[]string](),
		"no description": reflect.TypeFor[struct {
			Path string `json:"path"`
		}](),
	} {
		if _, err := schemaOf(typ); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	_ = args{}.inner
}
