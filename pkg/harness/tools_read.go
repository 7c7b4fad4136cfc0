package harness

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/untrusted"
)

// detailedFailures is how many failures get_task_details shows with their
// output; the others are shown by message and frames.
const detailedFailures = 3

func (s *session) taskDetails() string {
	t := s.t
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s: %s\n", t.ID, t.Title())
	fmt.Fprintf(&b, "Repository: %s at commit %s", t.Repo, task.Short(t.Commit))
	if t.Branch != "" {
		fmt.Fprintf(&b, " (branch %s)", t.Branch)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "Failing tests (%d):\n", len(t.Failures))
	for i, f := range t.Failures {
		fmt.Fprintf(&b, "%d. %s\n", i+1, f.ID())
		if f.Message != "" {
			fmt.Fprintf(&b, "   message: %s\n", f.Message)
		}
		if len(f.Frames) > 0 {
			fmt.Fprintf(&b, "   stack frames: %s\n", strings.Join(f.Frames, ", "))
		}
		if i == detailedFailures {
			b.WriteString("   (output left out from here on; run_tests shows it)\n")
		}
		if out := strings.TrimSpace(f.Output); out != "" && i < detailedFailures {
			b.WriteString("   output:\n")
			b.WriteString(indent(trimLines(out, failureLines), "     "))
			b.WriteString("\n")
		}
	}
	fl := t.Flakiness
	b.WriteString("\nFlakiness: ")
	switch {
	case len(t.FlakinessByTest) > 0:
		b.WriteString("re-runs at the failing commit, test by test:\n")
		for _, e := range t.FlakinessByTest {
			fmt.Fprintf(&b, "  %s: failed %d of %d runs (%s)\n", e.Test, e.Failures, e.Runs, e.Verdict)
		}
	case fl.Runs == 0:
		b.WriteString("not measured\n")
	default:
		fmt.Fprintf(&b, "failed %d of %d reruns (%s)\n", fl.Failures, fl.Runs, fl.Verdict)
	}
	bs := t.Bisection
	b.WriteString("Bisection: ")
	if bs.Blame == "" {
		b.WriteString("no blamed commit\n")
	} else {
		fmt.Fprintf(&b, "commit %s", task.Short(bs.Blame))
		if bs.Subject != "" {
			fmt.Fprintf(&b, " %q", bs.Subject)
		}
		if bs.Author != "" {
			fmt.Fprintf(&b, " by %s", bs.Author)
		}
		fmt.Fprintf(&b, " broke the tests (last good %s, first bad %s, %s tested). Use get_diff_details to see it.\n",
			task.Short(bs.Good), task.Short(bs.Bad), plural(bs.Steps, "commit", "commits"))
	}
	return b.String()
}

func (s *session) diffDetails(ctx context.Context, args DiffArgs) (Observation, error) {
	rev := strings.TrimSpace(args.Commit)
	if rev == "" {
		rev = s.t.Bisection.Blame
	}
	note := ""
	if rev == "" {
		latest, where, err := s.latestTestedChange(ctx)
		if err != nil {
			return Observation{}, err
		}
		if latest == "" {
			return problem("The task has no blamed commit, and no commit touches the failing tests' packages; name a commit."), nil
		}
		rev = latest
		note = fmt.Sprintf("The task has no blamed commit: this is the most recent commit that touched %s. Name another commit to see it.\n\n", where)
	}
	sha, err := s.ws.Repo.Resolve(ctx, rev)
	if err != nil {
		if ctx.Err() != nil {
			return Observation{}, fmt.Errorf("resolve %s: %w", rev, ctx.Err())
		}
		if errors.Is(err, gitrepo.ErrUnknownRevision) {
			return problem("No commit %q in the repository.", rev), nil
		}
		return Observation{}, err
	}
	c, err := s.ws.Repo.Show(ctx, sha)
	if err != nil {
		return Observation{}, fmt.Errorf("describe commit %s: %w", sha, err)
	}
	var b strings.Builder
	b.WriteString(note)
	fmt.Fprintf(&b, "commit %s\nAuthor: %s\nDate:   %s\n\n    %s\n", c.SHA, c.Author, c.Date, c.Subject)
	if c.Body != "" {
		b.WriteString("\n" + indent(c.Body, "    ") + "\n")
	}
	fmt.Fprintf(&b, "\nFiles changed (%d):\n", len(c.Files))
	for _, f := range c.Files {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	b.WriteString("\n")
	// Keep room for the header within the observation's limit.
	shown := clip.Middle(c.Diff, max(s.h.cfg.OutputLimit-b.Len()-200, 1000))
	b.WriteString(shown)
	return Observation{Content: b.String(), Commit: &CommitResult{SHA: c.SHA, Diff: shown}}, nil
}

func (s *session) readDirectory(args PathArgs) (Observation, error) {
	_, rel, bad := s.resolve(args.Path)
	if bad != nil {
		return *bad, nil
	}
	entries, err := untrusted.ReadDir(s.ws.Dir, rel)
	if err != nil {
		if info, serr := untrusted.Lstat(s.ws.Dir, rel); serr == nil && info.Mode().IsRegular() {
			return problem("%s is a file; use read_file.", rel), nil
		}
		return problem("Cannot read the directory %s: %v.", rel, err), nil
	}
	var names []string
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	// Directories first, as people expect.
	sort.SliceStable(names, func(i, j int) bool {
		di, dj := strings.HasSuffix(names[i], "/"), strings.HasSuffix(names[j], "/")
		if di != dj {
			return di
		}
		return names[i] < names[j]
	})
	var b strings.Builder
	shown := rel
	if shown == "." {
		shown = "the repository root"
	}
	fmt.Fprintf(&b, "%s (%s):\n", shown, plural(len(names), "entry", "entries"))
	for i, n := range names {
		if i == listCap {
			fmt.Fprintf(&b, "[… %d more entries]\n", len(names)-listCap)
			break
		}
		b.WriteString(n + "\n")
	}
	return Observation{Content: b.String()}, nil
}

func (s *session) readFile(ctx context.Context, args ReadFileArgs) (Observation, error) {
	content, rel, bad := s.readText(ctx, args.Path)
	if bad != nil {
		return *bad, nil
	}
	lines := splitLines(content)
	total := len(lines)
	if total == 0 {
		return Observation{Content: fmt.Sprintf("%s is empty.", rel), Listing: &ListingResult{Path: rel}}, nil
	}
	from, to := args.StartLine, args.EndLine
	ranged := from > 0 || to > 0
	if from <= 0 {
		from = 1
	}
	if to <= 0 || to > total {
		to = total
	}
	if from > total {
		return problem("%s has %s; start_line %d is past its end.", rel, plural(total, "line", "lines"), from), nil
	}
	if from > to {
		return problem("start_line %d is after end_line %d.", from, to), nil
	}
	capLines := readFileLines
	if ranged {
		capLines = readRangeLines
	}
	to = min(to, from+capLines-1)
	// Stay within the observation limit, so that the loop never cuts the
	// middle of a listing.
	budget := s.h.cfg.OutputLimit - 400
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s), lines %d-%d:\n", rel, plural(total, "line", "lines"), from, to)
	listing := &ListingResult{Path: rel, Total: total}
	shownTo := from - 1
	for n := from; n <= to; n++ {
		line := fmt.Sprintf("%6d\t%s\n", n, lines[n-1])
		if b.Len()+len(line) > budget && n > from {
			break
		}
		listing.line(&b, n, lines[n-1])
		shownTo = n
	}
	wanted := total
	if args.EndLine > 0 {
		wanted = min(args.EndLine, total)
	}
	if shownTo < wanted {
		fmt.Fprintf(&b, "[Shown: lines %d-%d of %d. Call read_file with start_line=%d to read on.]\n", from, shownTo, total, shownTo+1)
	}
	return Observation{Content: b.String(), Listing: listing}, nil
}

func (s *session) goToLine(ctx context.Context, args GoToLineArgs) (Observation, error) {
	content, rel, bad := s.readText(ctx, args.Path)
	if bad != nil {
		return *bad, nil
	}
	lines := splitLines(content)
	total := len(lines)
	if args.Line < 1 || args.Line > total {
		return problem("%s has %s; line %d is not in it.", rel, plural(total, "line", "lines"), args.Line), nil
	}
	from := max(args.Line-goToLineWindow/2, 1)
	to := min(from+goToLineWindow-1, total)
	from = max(to-goToLineWindow+1, 1)
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s), lines %d-%d around line %d:\n", rel, plural(total, "line", "lines"), from, to, args.Line)
	listing := &ListingResult{Path: rel, Total: total}
	for n := from; n <= to; n++ {
		listing.line(&b, n, lines[n-1])
	}
	return Observation{Content: b.String(), Listing: listing}, nil
}

func (s *session) findFile(ctx context.Context, args FindFileArgs) (Observation, error) {
	pat := strings.TrimSpace(args.Pattern)
	if pat == "" {
		return problem("A pattern is required: a file name, part of one, or a glob."), nil
	}
	pat = strings.TrimPrefix(pat, "./")
	if _, err := path.Match(pat, ""); err != nil {
		return problem("The glob %q is malformed: %v.", pat, err), nil
	}
	files, err := s.listFiles(ctx)
	if err != nil {
		return Observation{}, err
	}
	var hits []string
	for _, f := range files {
		if matchFile(pat, f) {
			hits = append(hits, f)
		}
	}
	// Exact names first, then shallower paths.
	base := path.Base(pat)
	sort.SliceStable(hits, func(i, j int) bool {
		ei, ej := path.Base(hits[i]) == base, path.Base(hits[j]) == base
		if ei != ej {
			return ei
		}
		di, dj := strings.Count(hits[i], "/"), strings.Count(hits[j], "/")
		if di != dj {
			return di < dj
		}
		return hits[i] < hits[j]
	})
	if len(hits) == 0 {
		return Observation{Content: fmt.Sprintf("No file matches %q.", pat), Find: &FindResult{}}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s match %q:\n", plural(len(hits), "file", "files"), pat)
	found := &FindResult{}
	for i, h := range hits {
		if i == listCap {
			fmt.Fprintf(&b, "[… %d more; narrow the pattern]\n", len(hits)-listCap)
			break
		}
		from := b.Len()
		b.WriteString(h + "\n")
		found.add(h, from, b.Len())
	}
	return Observation{Content: b.String(), Find: found}, nil
}

// matchFile matches a repository path against a glob ("**" spans
// directories; without a '/', the glob matches the base name) or, without
// glob characters, a case-insensitive part of the path.
func matchFile(pat, file string) bool {
	if !strings.ContainsAny(pat, "*?[") {
		if strings.Contains(pat, "/") {
			return strings.Contains(strings.ToLower(file), strings.ToLower(pat))
		}
		return strings.Contains(strings.ToLower(path.Base(file)), strings.ToLower(pat))
	}
	if !strings.Contains(pat, "/") {
		ok, _ := path.Match(pat, path.Base(file))
		return ok
	}
	return globMatch(strings.Split(pat, "/"), strings.Split(file, "/")) ||
		(!strings.HasPrefix(pat, "**/") && globMatch(strings.Split("**/"+pat, "/"), strings.Split(file, "/")))
}

func globMatch(pat, parts []string) bool {
	if len(pat) == 0 {
		return len(parts) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(parts); i++ {
			if globMatch(pat[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], parts[0]); !ok {
		return false
	}
	return globMatch(pat[1:], parts[1:])
}

// latestTestedChange is the most recent commit that touched the directories
// of the failing tests' packages (the repository when none resolves), and
// how to say where.
func (s *session) latestTestedChange(ctx context.Context) (sha, where string, err error) {
	var dirs []string
	for _, id := range s.t.Tests() {
		if t, err := s.resolveTest(id); err == nil && !slices.Contains(dirs, t.Dir) {
			dirs = append(dirs, t.Dir)
		}
	}
	where = "the repository"
	args := []string{"log", "-1", "--format=%H", "HEAD"}
	if len(dirs) > 0 {
		where = "the failing tests' package (" + strings.Join(dirs, ", ") + ")"
		args = append(append(args, "--"), dirs...)
	}
	out, err := s.ws.Repo.Git(ctx, args...)
	if err != nil {
		return "", "", fmt.Errorf("find the latest change of %s: %w", where, err)
	}
	return strings.TrimSpace(out), where, nil
}
