package validators

import (
	"context"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/task"
)

// GateRepoPaths is the gate of the repository's own paths (.redfix.yaml's
// paths.allow and paths.deny). It runs first, and only when the input
// carries the repository's policy.
const GateRepoPaths = "paths"

// PathPolicy is the repository's word on the paths redfix may change
// (repoconfig.Policy): ok, or the rule that refuses the path.
type PathPolicy interface {
	PathAllowed(path string) (ok bool, rule string)
}

// repoPaths rejects a patch touching a path the repository's policy
// refuses, naming each path and its rule. A patch that cannot be read
// whole is rejected too: its paths cannot be known.
func (v *Validators) repoPaths(_ context.Context, c *candidate) (task.Gate, error) {
	if c.parseErr != nil {
		return fail("the patch cannot be read, so its paths cannot be checked: " + c.parseErr.Error()), nil
	}
	var bad []string
	for _, f := range c.files {
		for _, p := range f.Paths() {
			if ok, rule := c.in.Paths.PathAllowed(p); !ok {
				bad = append(bad, fmt.Sprintf("%s: refused by %s", p, rule))
			}
		}
	}
	if len(bad) > 0 {
		return fail("the patch changes paths the repository does not let redfix change: " + strings.Join(bad, "; ")), nil
	}
	return pass(fmt.Sprintf("%d file(s) changed, all within the repository's paths", len(c.files))), nil
}
