package validators

import (
	"fmt"

	"github.com/redfix/redfix/pkg/linebound"
	"github.com/redfix/redfix/pkg/unidiff"
)

// A patch is the model's text, and the gates read the files it changes
// with parsers (go/parser, tree-sitter, the gates' own lexers) whose time
// and memory grow with a line's length and with how deep its brackets nest:
// one added line of three million parentheses took `worker validate` past a
// gigabyte in tree-sitter alone. So the lines a patch adds are measured
// first, from the diff's text, and a patch out of bounds is refused unread:
// the integrity gate fails it naming the file and line, and no other gate
// (nor the judge, which runs only after the gates pass) reads it.

const (
	// MaxAddedLineBytes and MaxAddedNesting bound the lines a patch adds
	// (see pkg/linebound, which the agent's edits are held to as well).
	MaxAddedLineBytes = linebound.MaxBytes
	MaxAddedNesting   = linebound.MaxNesting
	// maxBoundReports bounds the violations named in the gate's detail.
	maxBoundReports = 10
)

// outOfBounds names how the patch exceeds the bounds: the configured
// number of files and changed lines, and each file's first added line
// longer than MaxAddedLineBytes or nesting deeper than MaxAddedNesting.
// It reads the diff's text only.
func (v *Validators) outOfBounds(files []unidiff.File) []string {
	bad := v.sizeViolations(files)
	for _, f := range files {
		bad = append(bad, lineViolations(f)...)
	}
	if len(bad) > maxBoundReports {
		more := len(bad) - maxBoundReports
		bad = append(bad[:maxBoundReports], fmt.Sprintf("and %d more", more))
	}
	return bad
}

// lineViolations names the first added line of f over the length bound and
// the first where the added lines' brackets nest past the depth bound.
func lineViolations(f unidiff.File) []string {
	var long, deep string
	var d linebound.Depth
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if !l.Added() {
				continue
			}
			if n := len(l.Text); n > MaxAddedLineBytes && long == "" {
				long = fmt.Sprintf("%s:%d: adds a line of %d bytes, more than the %d an added line may have", f.Path(), l.NewLine, n, MaxAddedLineBytes)
			}
			if deep == "" && d.Nest(l.Text) {
				deep = fmt.Sprintf("%s:%d: adds brackets nested more than %d deep", f.Path(), l.NewLine, MaxAddedNesting)
			}
		}
	}
	var bad []string
	for _, s := range []string{long, deep} {
		if s != "" {
			bad = append(bad, s)
		}
	}
	return bad
}

// sizeViolations holds a patch to the configured size: a repair that needs
// more is a change for a person to make.
func (v *Validators) sizeViolations(files []unidiff.File) []string {
	var bad []string
	if n := v.cfg.MaxPatchFiles; n > 0 && len(files) > n {
		bad = append(bad, fmt.Sprintf("the patch changes %d files, more than the limit of %d", len(files), n))
	}
	lines := 0
	for _, f := range files {
		for _, h := range f.Hunks {
			a, r := h.Changed()
			lines += a + r
		}
	}
	if n := v.cfg.MaxPatchLines; n > 0 && lines > n {
		bad = append(bad, fmt.Sprintf("the patch changes %d lines, more than the limit of %d", lines, n))
	}
	return bad
}
