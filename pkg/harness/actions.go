package harness

import "encoding/json"

// Action is one step the policy takes: a tool (pkg/harness/tools) and its
// arguments.
type Action struct {
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args,omitempty"`
	Thought string          `json:"thought,omitempty"`
	// CallID is the model's tool-call id, for policies that need it back.
	CallID string `json:"call_id,omitempty"`
}

// NewAction marshals args into an action.
func NewAction(name, thought string, args any) Action {
	a := Action{Name: name, Thought: thought}
	if args != nil {
		a.Args, _ = json.Marshal(args)
	}
	return a
}
