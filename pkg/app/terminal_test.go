package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/triage"
)

// Escape sequences a test's output, a commit subject and an author carry:
// a clipboard write (OSC 52), a link hiding its target (OSC 8), cursor
// moves and a screen clear (CSI), an 8-bit CSI (U+009B) and a bell.
const (
	clipboard = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
	hidden    = "\x1b]8;;http://evil.example/\x1b\\"
	moves     = "\x1b[2A\x1b[1;1H\x1b[2J\u009b31m"
)

// terminalControls is what in s a terminal would obey.
func terminalControls(s string) []string {
	var found []string
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
			found = append(found, string(r))
		}
	}
	return found
}

// escapingRepo is a repository whose test fails, since its second commit,
// with a message full of escape sequences; that commit's subject and author
// carry them too. It returns the repository and its first (good) commit.
func escapingRepo(t *testing.T) (string, string) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "esc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/esc\n\ngo 1.22\n")
	write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
	write("calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n"+
		"\t\tt.Fatalf(\"\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x1b]8;;http://evil.example/\\x1b\\\\Add(2, 3) = %d\\x1b]8;;\\x1b\\\\, want 5\\x1b[2A\\x1b[2J\\u009b31m\", got)\n\t}\n}\n")
	good, err := repo.CommitAll(ctx, "calc: Add")
	if err != nil {
		t.Fatal(err)
	}
	write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n")
	if _, err := repo.Git(ctx, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	env := []string{"GIT_AUTHOR_NAME=Mallory " + moves + "Trusted Person", "GIT_AUTHOR_EMAIL=m@example.com"}
	if _, err := repo.GitWith(ctx, env, "commit", "-q", "-m", "calc: tidy "+clipboard+hidden+"Add"+moves); err != nil {
		t.Fatal(err)
	}
	return dir, good
}

// `bot triage` prints the failure's message and the blamed commit's subject
// and author as text: no escape sequence reaches the terminal. Its --json
// output holds none either, and still carries the text whole.
func TestTriageCommandPrintsNoTerminalControls(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	dir, good := escapingRepo(t)
	args := []string{"--repo", dir, "--good", good, "--bad", "HEAD", "--test", "TestAdd", "--reruns", "2"}

	var stdout, stderr bytes.Buffer
	if err := TriageCommand(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("triage: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	if c := terminalControls(out); len(c) > 0 {
		t.Errorf("bot triage printed %q:\n%q", c, out)
	}
	for _, want := range []string{"Add(2, 3) = -1, want 5", "calc: tidy Add", "Mallory Trusted Person"} {
		if !strings.Contains(out, want) {
			t.Errorf("bot triage does not print %q:\n%s", want, out)
		}
	}

	stdout.Reset()
	if err := TriageCommand(ctx, append(args, "--json"), &stdout, &stderr); err != nil {
		t.Fatalf("triage --json: %v\n%s", err, stderr.String())
	}
	if c := terminalControls(stdout.String()); len(c) > 0 {
		t.Errorf("bot triage --json printed %q", c)
	}
	var v triage.Verdict
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Failure == nil || !strings.Contains(v.Failure.Message, clipboard) || v.Bisection == nil || !strings.Contains(v.Bisection.Subject, clipboard+hidden) {
		t.Errorf("--json does not carry the text whole: %+v", v)
	}
	// The check finds what the repository holds.
	if len(terminalControls(v.Failure.Message)) == 0 {
		t.Error("the check finds nothing in the failure's message")
	}
}
