package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// specOf is the registered tool's spec, in neutral words; nil for an
// unknown name.
func specOf(name string) *Spec {
	t, ok := lookup(registered, name)
	if !ok {
		return nil
	}
	s := t.Spec(neutralWords)
	return &s
}

// ArgsFromPairs turns key=value words into the named tool's JSON
// arguments, typed by its parameters: integers, booleans, and lists split
// on commas; every other value is a string, taken as written. Unknown keys
// and missing required ones are errors that name the action's parameters.
func ArgsFromPairs(name string, pairs []string) (json.RawMessage, error) {
	spec := specOf(name)
	if spec == nil {
		return nil, fmt.Errorf("unknown action %q (the actions are: %s)", name, strings.Join(Names(registered), ", "))
	}
	props, _ := spec.Parameters["properties"].(map[string]any)
	args := map[string]any{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: argument %q is not key=value (parameters: %s)", name, p, paramList(spec))
		}
		prop, known := props[k].(map[string]any)
		if !known {
			return nil, fmt.Errorf("%s has no parameter %q (parameters: %s)", name, k, paramList(spec))
		}
		switch prop["type"] {
		case "integer":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %s wants a whole number, got %q", name, k, v)
			}
			args[k] = n
		case "boolean":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %s wants true or false, got %q", name, k, v)
			}
			args[k] = b
		case "array":
			var items []string
			for _, it := range strings.Split(v, ",") {
				if it = strings.TrimSpace(it); it != "" {
					items = append(items, it)
				}
			}
			args[k] = items
		default:
			args[k] = v
		}
	}
	for _, r := range requiredOf(spec) {
		if _, ok := args[r]; !ok {
			return nil, fmt.Errorf("%s needs %s=… (parameters: %s)", name, r, paramList(spec))
		}
	}
	return json.Marshal(args)
}

// Usage lists the tools with their parameters, one block per tool, as
// `worker tool --list` prints them.
func Usage() string {
	var b strings.Builder
	for _, s := range Specs(registered, nil) {
		fmt.Fprintf(&b, "%s\n    %s\n", s.Name, s.Description)
		props, _ := s.Parameters["properties"].(map[string]any)
		req := map[string]bool{}
		for _, r := range requiredOf(&s) {
			req[r] = true
		}
		for _, k := range sortedKeys(props) {
			p, _ := props[k].(map[string]any)
			typ, _ := p["type"].(string)
			desc, _ := p["description"].(string)
			mark := ""
			if req[k] {
				mark = ", required"
			}
			fmt.Fprintf(&b, "    %s=<%s%s>  %s\n", k, typ, mark, desc)
		}
	}
	return b.String()
}

func paramList(s *Spec) string {
	props, _ := s.Parameters["properties"].(map[string]any)
	if len(props) == 0 {
		return "none"
	}
	return strings.Join(sortedKeys(props), ", ")
}

func requiredOf(s *Spec) []string {
	switch r := s.Parameters["required"].(type) {
	case []string:
		return r
	case []any:
		var out []string
		for _, x := range r {
			if v, ok := x.(string); ok {
				out = append(out, v)
			}
		}
		return out
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
