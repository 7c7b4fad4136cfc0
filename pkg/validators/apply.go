package validators

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/workspace"
)

// GateApply is the verdict on whether a patch in hand applies to the
// checkout; `worker validate` shows it before the other gates.
const GateApply = "apply"

// Apply applies patch to the workspace. A patch that does not apply is a
// failed gate naming the hunk that did not; the error is for git failing.
func Apply(ctx context.Context, ws *workspace.Workspace, patch string) (task.Gate, error) {
	start := time.Now()
	gate := func(verdict, detail string) task.Gate {
		return task.Gate{Name: GateApply, Verdict: verdict, Detail: detail, ElapsedMS: time.Since(start).Milliseconds()}
	}
	if strings.TrimSpace(patch) == "" {
		return gate(task.GateFail, "the patch is empty"), nil
	}
	files, perr := unidiff.Parse(patch)
	if perr != nil {
		return gate(task.GateFail, "the patch cannot be read as a unified diff: "+perr.Error()), nil
	}
	if len(files) == 0 {
		return gate(task.GateFail, "the patch holds no file diff"), nil
	}
	// Counts written by hand are often off: Apply recounts from the hunks'
	// bodies, which changes nothing for a diff whose counts are right.
	out, err := ws.Apply(ctx, patch)
	if err != nil {
		if ctx.Err() != nil {
			return task.Gate{}, ctx.Err()
		}
		return gate(task.GateFail, applyFailure(files, out, err)), nil
	}
	added, removed := 0, 0
	for _, fl := range files {
		for _, h := range fl.Hunks {
			a, r := h.Changed()
			added, removed = added+a, removed+r
		}
	}
	return gate(task.GatePass, fmt.Sprintf("applies to %s: %d file(s), +%d -%d", task.Short(ws.Commit), len(files), added, removed)), nil
}

var patchFailedRE = regexp.MustCompile(`patch failed: (.+):(\d+)`)

// applyFailure says which hunk did not apply, from git apply's complaint.
func applyFailure(files []unidiff.File, out string, err error) string {
	msg := strings.TrimSpace(out)
	if msg == "" {
		msg = err.Error()
	}
	// git's own words, without its progress lines.
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if !strings.HasPrefix(l, "Checking patch ") && !strings.HasPrefix(l, "Applied patch ") {
			lines = append(lines, l)
		}
	}
	msg = strings.Join(lines, "\n")
	m := patchFailedRE.FindStringSubmatch(msg)
	if m == nil {
		return "the patch does not apply:\n" + msg
	}
	line, _ := strconv.Atoi(m[2])
	for _, f := range files {
		if f.OldPath != m[1] && f.NewPath != m[1] {
			continue
		}
		for i, h := range f.Hunks {
			if h.OldStart == line {
				return fmt.Sprintf("hunk %d of %d in %s (@@ -%d,%d +%d,%d @@) does not apply: its context or removed lines are not in the file at line %d.\n%s",
					i+1, len(f.Hunks), m[1], h.OldStart, h.OldCount, h.NewStart, h.NewCount, line, msg)
			}
		}
	}
	return fmt.Sprintf("the hunk of %s at line %s does not apply.\n%s", m[1], m[2], msg)
}
