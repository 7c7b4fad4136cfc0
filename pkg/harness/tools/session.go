package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/codesearch"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/untrusted"
	"github.com/redfix/redfix/pkg/workspace"
)

// Caps on what several tools show; each tool's own are in its file. The
// loop's OutputLimit caps the whole observation on top of these.
const (
	listCap      = 200 // entries read_directory and find_file show
	failureLines = 40  // lines of one failing test's output shown
)

// Env is what the tools work with besides the workspace and the task.
type Env struct {
	// Lang is the repository's language driver: it runs and names the
	// tests, checks edits and indexes declarations. A session needs one.
	Lang Language
	// Patcher turns edit instructions into blocks; nil: edits need
	// blocks.
	Patcher Patcher
	// OutputLimit is the loop's cap on an observation, in characters;
	// the tools that show much keep within it.
	OutputLimit int
	// TestRunFloor is the least time a test run after the session's
	// first may take (see TestRunFactor).
	TestRunFloor time.Duration
	Log          *zap.Logger
}

// Session is one episode's tools and the state they share: the files
// listed, the indexes, the checkout of the task's commit, whether the
// task's failing tests passed last.
type Session struct {
	env    Env
	set    []Tool
	ws     *workspace.Workspace
	t      task.Task
	exited *string // the summary, once exit ran
	// revertPasses: exit said that only undoing the blame commit passed.
	revertPasses bool

	// oraclePassed: the last run of the oracle tests passed and no edit
	// came after it.
	oraclePassed bool

	idx      *codeindex.Index
	idxStale bool
	// text is search_code's index of the files' trigrams, made by its
	// first search; an edit refreshes the file it wrote, a test run (which
	// may write files) has every file checked by the next search.
	text *codesearch.Index

	// files is the workspace's listing while listed is true; an edit
	// that creates a file adds it, a test run (which may write files)
	// drops the listing. Callers do not change it.
	files  []string
	listed bool

	// base is a checkout of the task's commit, made when an edit's
	// findings need comparing.
	base *workspace.Workspace

	// firstRun is how long the session's first run of the task's failing
	// tests took (0 until one finished): it bounds the later runs.
	firstRun time.Duration
}

// NewSession is a session of the tools of set on task t in ws. Close it
// when the episode ends.
func NewSession(env Env, ws *workspace.Workspace, t task.Task, set []Tool) *Session {
	if env.Log == nil {
		env.Log = zap.NewNop()
	}
	return &Session{env: env, set: set, ws: ws, t: t}
}

// Close removes what the session made.
func (s *Session) Close() {
	if s.base != nil {
		_ = s.base.Close()
	}
}

// Task is the session's task.
func (s *Session) Task() task.Task { return s.t }

// OraclePassed reports whether the last run of the task's failing tests
// passed, with no edit after it.
func (s *Session) OraclePassed() bool { return s.oraclePassed }

// Exited is the summary exit was given, once it ran.
func (s *Session) Exited() (summary string, ok bool) {
	if s.exited == nil {
		return "", false
	}
	return *s.exited, true
}

// RevertPasses reports whether exit said that no fix was found but undoing
// the blame commit's change made the failing tests pass.
func (s *Session) RevertPasses() bool { return s.revertPasses }

// problem is an observation of something the policy can fix.
func problem(format string, args ...any) Observation {
	return Observation{IsError: true, Content: fmt.Sprintf(format, args...)}
}

// Execute runs the named tool with its arguments (JSON). Problems the
// policy can act on come back as observations marked IsError, an unknown
// name among them; the error is for infrastructure failures and the end of
// ctx.
func (s *Session) Execute(ctx context.Context, name string, args json.RawMessage) (Observation, error) {
	t, ok := lookup(s.set, name)
	if !ok {
		return problem("Unknown action %q. The actions are: %s.", name, strings.Join(Names(s.set), ", ")), nil
	}
	return t.run(ctx, s, args)
}

// resolve confines p to the workspace. The observation is set when the path
// is refused.
func (s *Session) resolve(p string) (abs, rel string, bad *Observation) {
	abs, err := s.ws.Abs(p)
	if err != nil {
		o := problem("The path %q is refused: %v. Paths are relative to the repository root.", p, err)
		return "", "", &o
	}
	return abs, s.ws.Rel(abs), nil
}

// maxReadFile is the largest file the tools read from the workspace; a
// larger one is refused before any of it is read.
const maxReadFile = 8 << 20

// readText reads a text file for the policy; a missing file, a directory,
// a link, a file too large or a binary file is an observation.
func (s *Session) readText(ctx context.Context, p string) (content, rel string, bad *Observation) {
	if strings.TrimSpace(p) == "" {
		o := problem("A path is required.")
		return "", "", &o
	}
	_, rel, bad = s.resolve(p)
	if bad != nil {
		return "", "", bad
	}
	content, err := s.ws.ReadText(rel, maxReadFile)
	if err != nil {
		o := s.unreadable(ctx, rel, err)
		return "", "", &o
	}
	return content, rel, nil
}

// unreadable is the observation for a file of the workspace that the tools
// do not read, saying why.
func (s *Session) unreadable(ctx context.Context, rel string, err error) Observation {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return problem("No file %s.%s", rel, s.suggestFiles(ctx, rel))
	case errors.Is(err, untrusted.ErrLink):
		return problem("%s is, or lies under, a symbolic link; the tools read and edit regular files only: name the file it points to.", rel)
	case errors.Is(err, untrusted.ErrTooLarge):
		return problem("%s is larger than %d MiB; it is not read.", rel, maxReadFile>>20)
	case errors.Is(err, untrusted.ErrBinary):
		return problem("%s is a binary file.", rel)
	case errors.Is(err, untrusted.ErrNotRegular):
		if fi, serr := untrusted.Lstat(s.ws.Dir, rel); serr == nil && fi.IsDir() {
			return problem("%s is a directory; use read_directory.", rel)
		}
		return problem("%s is not a regular file.", rel)
	}
	return problem("Cannot read %s: %v.", rel, err)
}

// suggestFiles names files with the same base name as rel.
func (s *Session) suggestFiles(ctx context.Context, rel string) string {
	files, err := s.listFiles(ctx)
	if err != nil {
		return ""
	}
	base := path.Base(rel)
	var like []string
	for _, f := range files {
		if path.Base(f) == base {
			like = append(like, f)
		}
	}
	if len(like) == 0 {
		return " Use find_file to look for it."
	}
	if len(like) > 5 {
		like = like[:5]
	}
	return " Files with that name: " + strings.Join(like, ", ") + "."
}

// listFiles lists the workspace's files, tracked and untracked but not
// ignored, that exist.
func (s *Session) listFiles(ctx context.Context) ([]string, error) {
	if s.listed {
		return s.files, nil
	}
	out, err := s.ws.Repo.Git(ctx, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, fmt.Errorf("list the files of %s: %w", s.ws.Dir, err)
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		if info, err := os.Lstat(filepath.Join(s.ws.Dir, filepath.FromSlash(f))); err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		files = append(files, f)
	}
	sort.Strings(files)
	s.files, s.listed = files, true
	return files, nil
}

// created adds a file the session created to the listing, if there is one.
func (s *Session) created(rel string) {
	if !s.listed {
		return
	}
	i := sort.SearchStrings(s.files, rel)
	if i < len(s.files) && s.files[i] == rel {
		return
	}
	files := make([]string, 0, len(s.files)+1)
	files = append(append(append(files, s.files[:i]...), rel), s.files[i:]...)
	s.files = files
}

func numbered(b *strings.Builder, lines []string, from, to int) {
	for n := from; n <= to; n++ {
		fmt.Fprintf(b, "%6d\t%s\n", n, lines[n-1])
	}
}

// splitLines splits a file's text into lines, without a last empty one for
// the final newline.
func splitLines(content string) []string {
	if content == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(content, "\n"), "\n")
}

func (s *Session) index() (*codeindex.Index, error) {
	if s.idx == nil {
		idx, err := s.buildIndex()
		if err != nil {
			return nil, err
		}
		s.idx, s.idxStale = idx, false
		return idx, nil
	}
	if s.idxStale {
		if err := s.idx.Refresh(); err != nil {
			return nil, err
		}
		s.idxStale = false
	}
	return s.idx, nil
}

// reindex brings the symbol and text indexes up to date with an edited
// file, that file only; when that fails, the next search refreshes the
// whole symbol index.
func (s *Session) reindex(rel string) {
	if s.text != nil {
		s.text.Update(rel)
	}
	if s.idx == nil {
		return // built when first needed, from the tree as it is then
	}
	if err := s.idx.Reload(rel); err != nil {
		s.env.Log.Warn("reindex an edited file", zap.String("task_id", s.t.ID), zap.String("file", rel), zap.Error(err))
		s.idxStale = true
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// trimLines keeps the first and last lines of text within n lines.
func trimLines(text string, n int) string {
	ls := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(ls) <= n {
		return strings.Join(ls, "\n")
	}
	head := n / 2
	tail := n - head
	return strings.Join(ls[:head], "\n") + fmt.Sprintf("\n[… %d lines omitted …]\n", len(ls)-n) + strings.Join(ls[len(ls)-tail:], "\n")
}

func indent(text, prefix string) string {
	ls := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range ls {
		ls[i] = prefix + l
	}
	return strings.Join(ls, "\n")
}
