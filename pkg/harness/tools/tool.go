// Package tools is the agent's tools: what each is called, the arguments it
// takes, how it is described to a policy, and what it does in an episode's
// workspace. Each tool is one file, <name>.go, holding its argument struct
// (the JSON Schema of its parameters is made from it), its handler and its
// definition, and a sibling <name>.md, the template of its description;
// registered.go lists them. The loop (pkg/harness) runs them through a
// Session.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"text/template"
)

// Kind says what a tool's observation tells, so that a policy or a
// condenser that acts on some tools asks a tool's kind, never its name.
type Kind int

// The kinds. A tool that none fits is KindOther.
const (
	KindOther Kind = iota
	// KindExit ends the episode with a summary.
	KindExit
	// KindTask shows the task.
	KindTask
	// KindCommit shows a commit (Observation.Commit).
	KindCommit
	// KindListing shows lines of the file its "path" argument names
	// (Observation.Listing).
	KindListing
	// KindFind finds files by its "pattern" argument (Observation.Find).
	KindFind
	// KindDefinitions finds where the function or method its "name"
	// argument names is declared (Observation.Symbols).
	KindDefinitions
	// KindTests runs tests (Observation.Tests).
	KindTests
	// KindEdit changes a file (Observation.Edit).
	KindEdit
)

// Tool is one tool: made by Define, listed in registered.go.
type Tool struct {
	name string
	kind Kind
	// args is the type of its argument struct; params its parameters'
	// schema, made from args.
	args   reflect.Type
	params map[string]any
	desc   *template.Template
	run    func(ctx context.Context, s *Session, raw json.RawMessage) (Observation, error)
}

// Name is the tool's name, as policies call it.
func (t Tool) Name() string { return t.name }

// Define makes a tool: its name, its kind, the template of its description
// (rendered with a Words of the episode's language), and its handler,
// which gets its arguments decoded into A. A's JSON Schema is what the
// policy sees of the parameters (see schemaOf). Define panics on an
// argument struct it cannot describe or a description that does not
// render: both are the program's, found when the package loads.
func Define[A any](name string, kind Kind, description string, run func(*Session, context.Context, A) (Observation, error)) Tool {
	typ := reflect.TypeFor[A]()
	params, err := schemaOf(typ)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	desc, err := template.New(name).Option("missingkey=error").Parse(description)
	if err != nil {
		panic(fmt.Sprintf("tool %s: description: %v", name, err))
	}
	t := Tool{name: name, kind: kind, args: typ, params: params, desc: desc}
	// A tool without arguments ignores what it is given.
	noArgs := typ.Kind() == reflect.Struct && typ.NumField() == 0
	t.run = func(ctx context.Context, s *Session, raw json.RawMessage) (Observation, error) {
		var args A
		if !noArgs {
			if o := decode(name, raw, &args); o != nil {
				return *o, nil
			}
		}
		return run(s, ctx, args)
	}
	if _, err := t.describe(neutralWords); err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	return t
}

// decode reads a tool's arguments; absent arguments leave args as they are.
// Arguments that do not decode are an observation for the policy.
func decode(name string, raw json.RawMessage, args any) *Observation {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, args); err != nil {
		o := problem("The arguments of %s are not valid: %v. See the tool's parameters.", name, err)
		return &o
	}
	return nil
}

// describing is what a description's template is rendered with.
type describing struct {
	Words
	// BlockFormat is the SEARCH/REPLACE format edits are written in.
	BlockFormat string
}

func (t Tool) describe(w Words) (string, error) {
	var b strings.Builder
	if err := t.desc.Execute(&b, describing{Words: w, BlockFormat: BlockFormat}); err != nil {
		return "", fmt.Errorf("render the description: %w", err)
	}
	return strings.TrimSpace(b.String()), nil
}

// Spec describes a tool to a policy (an LLM's function definition).
type Spec struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"` // a JSON Schema object
	// Kind is what its observation tells, for the policies that read
	// observations by kind; it is not shown to a model.
	Kind Kind `json:"-"`
}

// Spec is the tool as a policy sees it, described in w's words.
func (t Tool) Spec(w Words) Spec {
	// Define rendered the template once with the same fields: it renders.
	d, _ := t.describe(w)
	return Spec{Name: t.name, Description: d, Parameters: copyMap(t.params), Kind: t.kind}
}

// Specs describes set, in its order, in the words of the episode's
// language (nil: Go's).
func Specs(set []Tool, l Language) []Spec {
	w := WordsOf(l)
	out := make([]Spec, len(set))
	for i, t := range set {
		out[i] = t.Spec(w)
	}
	return out
}

// KindOf is the kind of the named tool among specs; KindOther for a name
// none has.
func KindOf(specs []Spec, name string) Kind {
	for _, s := range specs {
		if s.Name == name {
			return s.Kind
		}
	}
	return KindOther
}

// All is the registered tools, in the order policies see them.
func All() []Tool { return append([]Tool(nil), registered...) }

// Names are the names of set, in its order.
func Names(set []Tool) []string {
	names := make([]string, len(set))
	for i, t := range set {
		names[i] = t.name
	}
	return names
}

// lookup is the named tool of set.
func lookup(set []Tool, name string) (Tool, bool) {
	for _, t := range set {
		if t.name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// copyMap copies a schema, so that no caller changes the tool's.
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			out[k] = copyMap(v)
		case []string:
			out[k] = append([]string(nil), v...)
		default:
			out[k] = v
		}
	}
	return out
}
