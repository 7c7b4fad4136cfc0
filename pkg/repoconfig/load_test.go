package repoconfig

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// reports records what the loader reported.
type reports struct{ got []string }

func (r *reports) ReportInvalid(_ context.Context, repo, commit string, problem error) error {
	r.got = append(r.got, commit+": "+problem.Error())
	return nil
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files (a nil content removes the file) and commits them.
func commit(t *testing.T, dir string, files map[string]*string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if content == nil {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(*content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "change")
	return git(t, dir, "rev-parse", "HEAD")
}

func str(s string) *string { return &s }

func TestLoadReadsTheFileAsCommitted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	none := commit(t, dir, map[string]*string{"go.mod": str("module x\n")})
	valid := commit(t, dir, map[string]*string{FileName: str("version: 1\npaths: {deny: [\"secret/**\"]}\nlimits: {repairs_per_day: 50}\n")})
	invalid := commit(t, dir, map[string]*string{FileName: str("version: 1\npaths: {deny: [\"secret/**\"]}\nlimit: {repairs_per_day: 1}\n")})
	big := commit(t, dir, map[string]*string{FileName: str("version: 1\n#" + strings.Repeat("x", MaxFileBytes) + "\n")})
	if err := os.Remove(filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}
	link := commit(t, dir, nil)
	removed := commit(t, dir, map[string]*string{FileName: nil})
	// The work tree holds a file that no commit has: it is never read.
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("version: 1\nenabled: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	rep := &reports{}
	l := &Loader{Central: func(string) Central { return Central{Enabled: true, RepairsPerDay: 20} }, Report: rep}
	load := func(c string) (Policy, error) {
		t.Helper()
		return l.Load(ctx, dir, c)
	}

	for _, c := range []string{none, removed} {
		p, err := load(c)
		if err != nil || !p.Enabled || len(p.Deny) > 0 || p.Source != "central configuration" || p.RepairsPerDay != 20 {
			t.Errorf("at %s (no file): %+v, %v; want the central configuration", c[:7], p, err)
		}
	}
	p, err := load(valid)
	if err != nil || len(p.Deny) != 1 || p.Deny[0] != "secret/**" || p.RepairsPerDay != 20 || len(p.Held) != 1 || !p.Enabled {
		t.Errorf("at the valid file: %+v, %v", p, err)
	}
	for _, c := range []struct{ commit, want string }{
		{invalid, `line 3: unknown key "limit"`},
		{big, "more than"},
		{link, "not a regular file"},
	} {
		p, err := load(c.commit)
		var inv *InvalidError
		if !errors.As(err, &inv) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("at %s: error %v; want an InvalidError with %q", c.commit[:7], err, c.want)
		}
		if !p.Enabled || len(p.Deny) > 0 || p.Source != "central configuration" {
			t.Errorf("at %s (invalid): %+v; want the central configuration", c.commit[:7], p)
		}
	}
	if len(rep.got) != 3 || !strings.HasPrefix(rep.got[0], invalid+": ") || !strings.Contains(rep.got[0], `unknown key "limit"`) {
		t.Errorf("reported %q; want the three invalid commits, the first naming the unknown key", rep.got)
	}
	if _, err := load("0123456789abcdef0123456789abcdef01234567"); err == nil || errors.As(err, new(*InvalidError)) {
		t.Errorf("an unknown commit: %v; want a machinery error", err)
	}
}
