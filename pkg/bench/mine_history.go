package bench

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/gitrepo"
)

// logFormat is a commit's header in firstParentLog's listing: a NUL, the
// hashes, a tab, the subject, US, the body, RS; its numstat lines follow.
const logFormat = "--format=%x00%H %P%x09%s%x1f%b%x1e"

// firstParentLog lists the first-parent history from head back to since
// (a revision, or else a date), newest first, with each commit's files as
// changed against its first parent. A history with git objects missing
// (a shallow or damaged clone) is listed commit by commit: a commit whose
// diff cannot be read names the missing object and the others are listed.
func firstParentLog(ctx context.Context, r gitrepo.Repo, head, since string) ([]commit, error) {
	args := []string{"log", "--first-parent"}
	rng := head
	if since != "" {
		if sha, err := r.Resolve(ctx, since); err == nil {
			rng = sha + ".." + head
		} else {
			if err := gitrepo.CheckRevision(since); err != nil {
				return nil, fmt.Errorf("--since %q: %w", since, err)
			}
			args = append(args, "--since="+since)
		}
	}
	out, err := r.Git(ctx, append(args, "--diff-merges=first-parent", "--no-renames", "--numstat", logFormat, rng, "--")...)
	if err == nil {
		return parseLog(out), nil
	}
	if ctx.Err() != nil || missingObject(err) == "" {
		return nil, fmt.Errorf("list the history: %s", cleanText(err.Error(), 600))
	}
	// An object is missing: the commits alone, then each one's diff.
	out, err = r.Git(ctx, append(args, logFormat, rng, "--")...)
	if err != nil {
		return nil, fmt.Errorf("list the history: %s", cleanText(err.Error(), 600))
	}
	cs := parseLog(out)
	for i, c := range cs {
		if c.parent == "" {
			continue
		}
		stat, err := r.Git(ctx, "diff-tree", "-r", "--no-renames", "--numstat", c.parent, c.sha, "--")
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if obj := missingObject(err); obj != "" {
				cs[i].missing = obj
				continue
			}
			return nil, fmt.Errorf("list the files of %s: %s", c.sha, cleanText(err.Error(), 600))
		}
		cs[i].files = parseNumstat(stat)
	}
	return cs, nil
}

// parseLog reads firstParentLog's listing.
func parseLog(out string) []commit {
	var cs []commit
	for _, rec := range strings.Split(out, "\x00") {
		rec = strings.TrimLeft(rec, "\n")
		if rec == "" {
			continue
		}
		msg, stat, _ := strings.Cut(rec, "\x1e")
		head, text, _ := strings.Cut(msg, "\t")
		subject, body, _ := strings.Cut(text, "\x1f")
		shas := strings.Fields(head)
		if len(shas) == 0 {
			continue
		}
		if len(shas) > 2 {
			// A merge's subject names the branch; its body, the change.
			if title := firstLine(body); title != "(no output)" {
				subject = title + " (" + subject + ")"
			}
		}
		c := commit{sha: shas[0], subject: subject, body: body, files: parseNumstat(stat)}
		if len(shas) > 1 {
			c.parent = shas[1]
		}
		cs = append(cs, c)
	}
	return cs
}

// parseNumstat reads git's --numstat lines.
func parseNumstat(stat string) []fileStat {
	var fs []fileStat
	for _, l := range strings.Split(stat, "\n") {
		f := strings.SplitN(l, "\t", 3)
		if len(f) != 3 {
			continue
		}
		a, _ := strconv.Atoi(f[0]) // "-" for binary files: 0
		d, _ := strconv.Atoi(f[1])
		fs = append(fs, fileStat{path: f[2], added: a, removed: d})
	}
	return fs
}

// missingObjectRE finds git's words for an object it could not read.
var (
	missingObjectRE = regexp.MustCompile(`(?i)unable to read|missing (blob|tree|commit|object)|bad object|could not read|corrupt|invalid object|not a valid object|expected object`)
	objectNameRE    = regexp.MustCompile(`\b[0-9a-f]{40}([0-9a-f]{24})?\b`)
)

// missingObject is the name of the git object that err (a git command's)
// says it could not read, "" when it says no such thing.
func missingObject(err error) string {
	for _, l := range strings.Split(err.Error(), "\n") {
		said, ok := gitSays(l)
		if !ok || !missingObjectRE.MatchString(said) {
			continue
		}
		if obj := objectNameRE.FindString(said); obj != "" {
			return obj
		}
	}
	return ""
}

// gitSays is a line of git's own complaints (fatal: or error: at its
// start; after "exit N: " on the error's first line, which names the
// command), not of the listing it printed before them; ok false for any
// other line.
func gitSays(l string) (said string, ok bool) {
	if _, after, found := strings.Cut(l, ": exit "); found {
		if _, rest, found := strings.Cut(after, ": "); found {
			l = rest
		}
	}
	l = strings.TrimSpace(l)
	return l, strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "error:")
}

// cleanText is a command's error made fit for a log line or a reason: no
// NUL or other control bytes, the lines that say fatal: or error: first
// when there are any (git's listing before them is noise), at most n
// runes.
func cleanText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	var said []string
	for _, l := range strings.Split(s, "\n") {
		if text, ok := gitSays(l); ok {
			said = append(said, text)
		}
	}
	if len(said) > 0 {
		// "git log …: exit 128: " and the lines that say why.
		head := ""
		if i := strings.Index(s, ": exit "); i >= 0 {
			if j := strings.Index(s[i+len(": exit "):], ":"); j >= 0 {
				head = s[:i+len(": exit ")+j+1] + " "
			}
		}
		s = head + strings.Join(said, " ")
	}
	return oneLine(s, n)
}
