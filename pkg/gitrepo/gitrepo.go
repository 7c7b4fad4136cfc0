// Package gitrepo drives the git command line on a local repository: clones
// for workspaces, commit ranges for bisection, diffs for the agent and
// branches for pull requests.
package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Identity is the author of the commits redfix makes.
const (
	AuthorName  = "redfix"
	AuthorEmail = "redfix@users.noreply.local"
)

// Repo is a git repository: a work tree at Dir whose git directory is
// GitDir, or, with GitDir empty, the repository git finds at Dir (a bare
// mirror, a repository redfix made itself and ran nothing in).
//
// A checkout where a repository's code runs keeps its git directory apart,
// outside the work tree and outside what the sandbox may write: whatever a
// test writes in the work tree (a .git file or directory, hooks, a config
// with core.fsmonitor) is never read by redfix's git, which is told where
// its git directory is.
type Repo struct {
	Dir    string
	GitDir string
	// seal is the digest of GitDir's configuration as redfix left it
	// (Seal); every command checks it first.
	seal string
}

// ErrUnknownRevision is returned when a revision does not name a commit.
var ErrUnknownRevision = errors.New("unknown revision")

// ErrNoRepository is returned when a local path is no repository: an
// answer, so trying again soon will not change it. A remote's answer is
// ErrUnfetchable.
var ErrNoRepository = errors.New("no such repository, or no access to it")

// noRepositorySigns are what git prints when a local path holds no
// repository.
var noRepositorySigns = []string{"does not exist", "not a git repository", "not found"}

// ErrTampered is returned when a checkout's git metadata is not what
// redfix left there: its git directory moved into the work tree, became a
// link, or its configuration changed.
var ErrTampered = errors.New("git metadata is not what redfix left")

// hardened is the configuration every git command redfix runs is given on
// its command line, where it overrides every configuration file: no
// filesystem monitor, no hooks, no submodules, no pager, no credential
// helper or ssh command but the ones redfix passes, no background
// maintenance (diffs are asked with --no-ext-diff and --no-textconv). It is
// a second wall: the first is that a checkout's git directory is redfix's
// alone (Repo.GitDir), so what a test could write never becomes a command
// git runs.
var hardened = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.untrackedCache=false",
	"-c", "core.pager=cat",
	"-c", "core.sshCommand=ssh",
	"-c", "core.fileMode=false",
	"-c", "credential.helper=",
	"-c", "diff.ignoreSubmodules=all",
	"-c", "submodule.recurse=false",
	"-c", "fetch.recurseSubmodules=false",
	"-c", "protocol.ext.allow=never",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "user.name=" + AuthorName, "-c", "user.email=" + AuthorEmail,
	"-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false",
	"-c", "init.defaultBranch=main",
	"-c", "advice.detachedHead=false",
}

// Git runs git with args in the repository and returns its output. A
// non-zero exit is an error carrying git's output.
func (r Repo) Git(ctx context.Context, args ...string) (string, error) {
	return r.GitWith(ctx, nil, args...)
}

// GitWith is Git with env added to this one command's environment (the
// credentials of a remote, given to git for one fetch or push and to no
// other process).
func (r Repo) GitWith(ctx context.Context, env []string, args ...string) (string, error) {
	if len(args) == 0 {
		return "", errors.New("git: no command")
	}
	if err := r.Verify(); err != nil && !untrusted.Trusting {
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	full := append(append([]string{"git"}, hardened...), args...)
	// No configuration but the repository's own (which redfix wrote) and
	// the command line's.
	base := []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_ATTR_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0"}
	if r.GitDir != "" {
		base = append(base, "GIT_DIR="+r.GitDir, "GIT_WORK_TREE="+r.Dir)
	}
	if untrusted.Trusting {
		// The boundary off (hostile tests only): git as redfix ran it
		// before, finding its metadata in the checkout.
		full = append([]string{"git", "-c", "user.name=" + AuthorName, "-c", "user.email=" + AuthorEmail, "-c", "commit.gpgsign=false"}, args...)
		base = nil
	}
	// git is redfix's own tool: it runs unconfined (clones need the
	// network), on git directories the sandbox cannot write.
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: r.Dir, Args: full, Env: append(base, env...), Timeout: 5 * time.Minute, MaxOutput: 8 << 20, Unconfined: true})
	if err != nil {
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	if !res.OK() {
		err := fmt.Errorf("git %s: exit %d: %s", strings.Join(args, " "), res.ExitCode, strings.TrimSpace(res.Output))
		if remoteCommand(args) && !res.TimedOut {
			return res.Output, r.classify(ctx, args, res.Output, err)
		}
		return res.Output, err
	}
	return res.Output, nil
}

// remoteCommand reports the git commands that reach a repository's source:
// their failure may say that there is no such repository.
func remoteCommand(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		switch a {
		case "clone", "fetch", "ls-remote":
			return true
		}
		return false
	}
	return false
}

// Init makes a new repository at dir with branch main.
func Init(ctx context.Context, dir string) (Repo, error) {
	r := Repo{Dir: dir}
	if _, err := r.Git(ctx, "init", "-q", "-b", "main"); err != nil {
		return Repo{}, fmt.Errorf("init %s: %w", dir, err)
	}
	return r, nil
}

// Clone clones src (a path or URL) into dst, without checking out, with
// its git directory in dst/.git: for copies nothing will run in (a
// checkout where code runs is CloneApart's). Both
// follow "--", so neither is read as an option.
func Clone(ctx context.Context, src, dst string) (Repo, error) {
	r := Repo{Dir: "."}
	if _, err := r.Git(ctx, "clone", "-q", "--no-checkout", "--", src, dst); err != nil {
		return Repo{}, fmt.Errorf("clone %s: %w", src, err)
	}
	return Repo{Dir: dst}, nil
}

// Resolve turns a revision into a full commit hash.
func (r Repo) Resolve(ctx context.Context, rev string) (string, error) {
	if err := CheckRevision(rev); err != nil {
		return "", fmt.Errorf("resolve in %s: %w", r.Dir, err)
	}
	out, err := r.Git(ctx, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("resolve %q in %s: %w", rev, r.Dir, ErrUnknownRevision)
	}
	return strings.TrimSpace(out), nil
}

// Checkout detaches the work tree at rev, discarding local changes.
func (r Repo) Checkout(ctx context.Context, rev string) error {
	if err := CheckRevision(rev); err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	if _, err := r.Git(ctx, "checkout", "-q", "-f", "--detach", rev); err != nil {
		return fmt.Errorf("checkout %s: %w", rev, err)
	}
	if _, err := r.Git(ctx, "clean", "-q", "-fdx"); err != nil {
		return fmt.Errorf("clean after checkout %s: %w", rev, err)
	}
	return nil
}

// Path lists the commits from good (exclusive) to bad (inclusive) along the
// first-parent ancestry, oldest first.
func (r Repo) Path(ctx context.Context, good, bad string) ([]string, error) {
	if err := checkRevisions(good, bad); err != nil {
		return nil, fmt.Errorf("list commits: %w", err)
	}
	out, err := r.Git(ctx, "rev-list", "--reverse", "--first-parent", "--ancestry-path", good+".."+bad)
	if err != nil {
		return nil, fmt.Errorf("list commits %s..%s: %w", good, bad, err)
	}
	return strings.Fields(out), nil
}

// IsAncestor reports whether a is an ancestor of b.
func (r Repo) IsAncestor(ctx context.Context, a, b string) bool {
	if checkRevisions(a, b) != nil {
		return false
	}
	_, err := r.Git(ctx, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// Commit describes one commit.
type Commit struct {
	SHA     string   `json:"sha"`
	Subject string   `json:"subject"`
	Body    string   `json:"body,omitempty"`
	Author  string   `json:"author"`
	Date    string   `json:"date"`
	Files   []string `json:"files"`
	Diff    string   `json:"diff,omitempty"`
}

// Show describes rev, its diff included.
func (r Repo) Show(ctx context.Context, rev string) (Commit, error) {
	if err := CheckRevision(rev); err != nil {
		return Commit{}, fmt.Errorf("show: %w", err)
	}
	const sep = "\x1f"
	out, err := r.Git(ctx, "show", "-s", "--format=%H"+sep+"%s"+sep+"%an <%ae>"+sep+"%aI"+sep+"%b", rev)
	if err != nil {
		return Commit{}, fmt.Errorf("show %s: %w", rev, err)
	}
	parts := strings.SplitN(strings.TrimRight(out, "\n"), sep, 5)
	if len(parts) < 5 {
		return Commit{}, fmt.Errorf("show %s: unexpected output %q", rev, out)
	}
	c := Commit{SHA: parts[0], Subject: parts[1], Author: parts[2], Date: parts[3], Body: strings.TrimSpace(parts[4])}
	files, err := r.Git(ctx, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", rev)
	if err != nil {
		return Commit{}, fmt.Errorf("files of %s: %w", rev, err)
	}
	c.Files = strings.Fields(files)
	diff, err := r.Git(ctx, "show", "--format=", "--no-color", "--no-ext-diff", "--no-textconv", "--root", rev)
	if err != nil {
		return Commit{}, fmt.Errorf("diff of %s: %w", rev, err)
	}
	c.Diff = diff
	return c, nil
}

// Diff is the work tree's change against HEAD, new files included, with
// every file the work tree holds: for repositories redfix made and ran
// nothing in. A checkout's patch is DiffPaths of what was edited.
func (r Repo) Diff(ctx context.Context) (string, error) {
	if _, err := r.Git(ctx, "add", "-A", "-N"); err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	out, err := r.Git(ctx, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "HEAD")
	if err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	return out, nil
}

// CommitAll commits every change in the work tree and returns the commit:
// for repositories redfix made and ran nothing in, never a checkout where a
// repository's code ran.
func (r Repo) CommitAll(ctx context.Context, message string) (string, error) {
	if _, err := r.Git(ctx, "add", "-A"); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	if _, err := r.Git(ctx, "commit", "-q", "-m", message); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	return r.Resolve(ctx, "HEAD")
}

// Apply applies a unified diff to the work tree.
func (r Repo) Apply(ctx context.Context, patchFile string) error {
	if _, err := r.Git(ctx, "apply", "--whitespace=nowarn", patchFile); err != nil {
		return fmt.Errorf("apply %s: %w", patchFile, err)
	}
	return nil
}

// SetBranch points branch at rev, creating it if needed.
func (r Repo) SetBranch(ctx context.Context, branch, rev string) error {
	if err := checkRevisions(branch, rev); err != nil {
		return fmt.Errorf("branch: %w", err)
	}
	if _, err := r.Git(ctx, "branch", "-f", branch, rev); err != nil {
		return fmt.Errorf("branch %s at %s: %w", branch, rev, err)
	}
	return nil
}

// Fetch fetches rev from remote into the repository.
func (r Repo) Fetch(ctx context.Context, remote, refspec string) error {
	if strings.HasPrefix(remote, "-") || strings.HasPrefix(refspec, "-") {
		return fmt.Errorf("fetch %s from %s: %w", refspec, remote, ErrBadRevision)
	}
	if _, err := r.Git(ctx, "fetch", "-q", "--", remote, refspec); err != nil {
		return fmt.Errorf("fetch %s from %s: %w", refspec, remote, err)
	}
	return nil
}

// ErrNotAFile is returned by ReadFile for a path that is not a regular
// file at the commit (a directory, a link, a submodule).
var ErrNotAFile = errors.New("not a regular file")

// ErrTooLarge is returned by ReadFile for a file larger than asked.
var ErrTooLarge = errors.New("file too large")

// ReadFile reads file (a path from the repository's top) as committed at
// rev, from git's objects alone: no work tree is looked at, so nothing a
// run wrote can stand in for it. Its size is read first; a file over max
// bytes is ErrTooLarge, unread. found is false when rev has no such path.
func (r Repo) ReadFile(ctx context.Context, rev, file string, max int64) (data []byte, found bool, err error) {
	sha, err := r.Resolve(ctx, rev)
	if err != nil {
		return nil, false, err
	}
	if file == "" || strings.HasPrefix(file, "/") || strings.HasPrefix(file, "-") || strings.Contains(file, "\x00") {
		return nil, false, fmt.Errorf("read %q at %s: %w", file, sha, ErrBadRevision)
	}
	// ls-tree -l: "<mode> <type> <object> <size>\t<path>", nothing when
	// the path is not there.
	out, err := r.Git(ctx, "ls-tree", "-l", "--full-tree", sha, "--", file)
	if err != nil {
		return nil, false, fmt.Errorf("look up %s at %s: %w", file, sha, err)
	}
	line := strings.TrimRight(out, "\n")
	if line == "" {
		return nil, false, nil
	}
	meta, name, _ := strings.Cut(line, "\t")
	f := strings.Fields(meta)
	if len(f) != 4 || name != file {
		return nil, false, fmt.Errorf("look up %s at %s: unexpected %q", file, sha, line)
	}
	if f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
		return nil, true, fmt.Errorf("%s at %s (mode %s): %w", file, shortSHA(sha), f[0], ErrNotAFile)
	}
	var size int64
	if _, err := fmt.Sscan(f[3], &size); err != nil {
		return nil, true, fmt.Errorf("size of %s at %s: %q", file, sha, f[3])
	}
	if size > max {
		return nil, true, fmt.Errorf("%s at %s is %d bytes, more than %d: %w", file, shortSHA(sha), size, max, ErrTooLarge)
	}
	blob, err := r.Git(ctx, "cat-file", "blob", f[2])
	if err != nil {
		return nil, true, fmt.Errorf("read %s at %s: %w", file, sha, err)
	}
	return []byte(blob), true, nil
}

// shortSHA is a commit's short form for messages.
func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
