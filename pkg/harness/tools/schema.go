package tools

import (
	"fmt"
	"reflect"
	"strings"
)

// schemaOf is the JSON Schema of a tool's argument struct, as a policy is
// given it: an object whose properties are the struct's fields, named by
// their json tags and described by their description tags, none other
// allowed. A field is required unless its json tag says omitempty; a field
// tagged schema:"-" still decodes but is not shown. Strings, integers,
// booleans and lists of them are what a field may hold.
func schemaOf(t reflect.Type) (map[string]any, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("the arguments are a %s, not a struct", t)
	}
	props := map[string]any{}
	var required []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("schema") == "-" {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			return nil, fmt.Errorf("field %s has no json name", f.Name)
		}
		desc := f.Tag.Get("description")
		if desc == "" {
			return nil, fmt.Errorf("field %s has no description", f.Name)
		}
		p, err := typeOf(f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		p["description"] = desc
		props[name] = p
		if !hasOption(opts, "omitempty") {
			required = append(required, name)
		}
	}
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o, nil
}

// typeOf is the schema of a field's type, without its description.
func typeOf(t reflect.Type) (map[string]any, error) {
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Slice:
		items, err := typeOf(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	}
	return nil, fmt.Errorf("a %s has no schema here", t)
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}
