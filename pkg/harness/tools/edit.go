package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/linebound"
	"github.com/redfix/redfix/pkg/untrusted"
	"github.com/redfix/redfix/pkg/workspace"
)

// Edit is the tool that changes one file by SEARCH/REPLACE blocks or instructions.
const Edit = "edit"

// EditArgs are edit's arguments: either Blocks (SEARCH/REPLACE blocks,
// applied as given) or Instructions (natural language, turned into blocks
// by the patcher).
type EditArgs struct {
	Path         string `json:"path" description:"File path relative to the repository root."`
	Instructions string `json:"instructions,omitempty" description:"What to change, in words (used when blocks are not given)."`
	Blocks       string `json:"blocks,omitempty" description:"One or more SEARCH/REPLACE blocks."`
}

//go:embed edit.md
var editDoc string

var editTool = Define(Edit, KindEdit, editDoc, (*Session).edit)

// Patcher turns natural-language edit instructions into SEARCH/REPLACE
// blocks for one file (the edit action's sub-agent).
type Patcher interface {
	Blocks(ctx context.Context, path, content, instructions string) (string, error)
}

func (s *Session) edit(ctx context.Context, args EditArgs) (Observation, error) {
	f, refused := s.editTarget(ctx, args.Path)
	if refused != nil {
		return *refused, nil
	}
	rel, content, exists := f.rel, f.content, f.exists

	text := args.Blocks
	via := ""
	if strings.TrimSpace(text) == "" {
		switch {
		case strings.TrimSpace(args.Instructions) == "":
			return problem("Give blocks (SEARCH/REPLACE) or instructions for %s.", rel), nil
		case s.env.Patcher == nil:
			return problem("No patcher is configured to turn instructions into edits; give SEARCH/REPLACE blocks:\n%s", BlockFormat), nil
		}
		var err error
		if text, err = s.env.Patcher.Blocks(ctx, rel, content, args.Instructions); err != nil {
			return Observation{}, fmt.Errorf("patcher writing blocks for %s: %w", rel, err)
		}
		via = " (written by the patcher from the instructions)"
	}
	blocks, err := ParseBlocks(text)
	if err != nil {
		return editFailed("The blocks%s for %s cannot be read: %v\nThe format is:\n%s", via, rel, err, BlockFormat), nil
	}
	if !exists {
		for i, b := range blocks {
			if strings.TrimSpace(b.Search) != "" {
				return editFailed("%s does not exist; block %d of %d searches it. To create the file, give one block with an empty SEARCH.%s",
					rel, i+1, len(blocks), s.suggestFiles(ctx, rel)), nil
			}
		}
	}
	if why := outOfBounds(blocks); why != "" {
		return editFailed("The edit%s of %s was not applied: %s. Write code as a person would.", via, rel, why), nil
	}
	updated, err := ApplyBlocks(content, blocks)
	if err != nil {
		return editFailed("The edit%s of %s was not applied: %v", via, rel, err), nil
	}
	if exists && updated == content {
		return editFailed("The blocks%s change nothing in %s.", via, rel), nil
	}
	if err := s.ws.WriteFile(rel, []byte(updated), f.mode); err != nil {
		if errors.Is(err, untrusted.ErrLink) || errors.Is(err, untrusted.ErrNotRegular) || errors.Is(err, workspace.ErrOutside) {
			return editFailed("%s cannot be written: %v.", rel, err), nil
		}
		return Observation{}, fmt.Errorf("write %s: %w", rel, err)
	}
	// The tests passed, if they did, without this change.
	s.oraclePassed = false
	if !exists {
		s.created(rel)
	}
	s.reindex(rel)

	return s.edited(ctx, rel, exists, len(blocks), via)
}

// editFile is the file an edit changes: its path in the checkout, its
// text and mode, and whether it exists yet.
type editFile struct {
	rel     string
	content string
	mode    fs.FileMode
	exists  bool
}

// asRefusal is o, an observation that refuses the edit.
func asRefusal(o Observation) *Observation { return &o }

// editTarget is the file at path an edit may change, read; or why not:
// no path, outside the checkout, refused by the repository's paths rules,
// a directory, unreadable.
func (s *Session) editTarget(ctx context.Context, path string) (editFile, *Observation) {
	if strings.TrimSpace(path) == "" {
		return editFile{}, asRefusal(problem("A path is required: edit changes one file."))
	}
	_, rel, bad := s.resolve(path)
	if bad != nil {
		return editFile{}, bad
	}
	if rel == "." {
		return editFile{}, asRefusal(problem("%q is the repository root, not a file.", path))
	}
	if r := pathsFrom(ctx); r != nil {
		if ok, rule := r.PathAllowed(rel); !ok {
			return editFile{}, asRefusal(problem("%s may not be changed: refused by %s. A patch that changes it is rejected; fix the failure in files the repository lets redfix change.", rel, rule))
		}
	}
	f := editFile{rel: rel, exists: true, mode: fs.FileMode(0o644)}
	info, err := untrusted.Lstat(s.ws.Dir, rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.exists = false
	case err != nil && !errors.Is(err, untrusted.ErrLink):
		return editFile{}, asRefusal(problem("Cannot read %s: %v.", rel, err))
	case err == nil && info.IsDir():
		return editFile{}, asRefusal(problem("%s is a directory; edit changes one file.", rel))
	default:
		if f.content, err = s.ws.ReadText(rel, maxReadFile); err != nil {
			return editFile{}, asRefusal(s.unreadable(ctx, rel, err))
		}
		f.mode = info.Mode().Perm()
	}
	return f, nil
}

// edited is the observation of an edit applied to rel: its diff and what
// the static analysis says of the file now.
func (s *Session) edited(ctx context.Context, rel string, exists bool, blocks int, via string) (Observation, error) {
	diff, err := s.fileDiff(ctx, rel)
	if err != nil {
		return Observation{}, err
	}
	diags, old, err := s.diagnose(ctx, rel)
	if err != nil {
		return Observation{}, err
	}
	var b strings.Builder
	verb := "Edited"
	if !exists {
		verb = "Created"
	}
	fmt.Fprintf(&b, "%s %s: %s applied%s.\n\n", verb, rel, plural(blocks, "block", "blocks"), via)
	shownDiff := clip.Middle(diff, max(s.env.OutputLimit/2, 1000))
	b.WriteString(shownDiff)
	switch checks := s.checksOf(rel); {
	case diags == "" && len(old) == 0:
		fmt.Fprintf(&b, "\nStatic analysis (%s): clean.\n", checks)
	case diags == "":
		fmt.Fprintf(&b, "\nStatic analysis (%s): no new finding; %s before this edit, not this edit's:\n%s", checks, plural(len(old), "finding was there", "findings were there"), listOld(old))
	default:
		b.WriteString("\nStatic analysis found problems this edit brought:\n" + diags + "\n")
		if len(old) > 0 {
			fmt.Fprintf(&b, "%s there before this edit, not this edit's:\n%s", plural(len(old), "other finding was", "other findings were"), listOld(old))
		}
	}
	return Observation{Content: b.String(), Edit: &EditResult{Applied: true, Diff: shownDiff, Diagnostics: diags}}, nil
}

func editFailed(format string, args ...any) Observation {
	o := problem(format, args...)
	o.Edit = &EditResult{Applied: false}
	return o
}

// fileDiff is one file's change against HEAD, a new file included.
func (s *Session) fileDiff(ctx context.Context, rel string) (string, error) {
	out, err := s.ws.Repo.DiffPaths(ctx, []string{rel})
	if err != nil {
		return "", fmt.Errorf("diff of %s: %w", rel, err)
	}
	return out, nil
}

// outOfBounds says which block's replacement adds a line out of the bounds
// every added line is held to (pkg/linebound), "" when none does: such text
// reaches no parser, check or index.
func outOfBounds(blocks []Block) string {
	for i, b := range blocks {
		var d linebound.Depth
		for n, line := range strings.Split(b.Replace, "\n") {
			if why := d.Line(line); why != "" {
				return fmt.Sprintf("block %d adds %s (its line %d)", i+1, why, n+1)
			}
		}
	}
	return ""
}

// maxOldShown bounds the findings from before an edit that its
// observation names.
const maxOldShown = 5

// listOld names the findings that were there before an edit, one a line,
// the first maxOldShown of them.
func listOld(old []string) string {
	var b strings.Builder
	for i, f := range old {
		if i == maxOldShown {
			fmt.Fprintf(&b, "  … and %d more\n", len(old)-maxOldShown)
			break
		}
		line, _, _ := strings.Cut(f, "\n")
		fmt.Fprintf(&b, "  %s\n", line)
	}
	return b.String()
}
