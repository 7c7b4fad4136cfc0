package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: writes to the returned terminal are
// read back from pty.
func openPTY(t *testing.T) (pty, tty *os.File) {
	t.Helper()
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { pty.Close() })
	fd := int(pty.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("name the pseudo-terminal: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open its terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return pty, tty
}

// Progress goes to a terminal only: not to a buffer, a pipe or a file.
func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, out := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "pipe": w, "file": file, "discard": io.Discard} {
		if IsTerminal(out) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
	_, tty := openPTY(t)
	if !IsTerminal(tty) {
		t.Error("a pseudo-terminal not taken for a terminal")
	}
}

// Off a terminal the long commands' progress prints nothing at all; on one
// it prints their lines.
func TestProgressOnlyOnTerminal(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var buf bytes.Buffer
	for _, out := range []io.Writer{&buf, file} {
		StageLines(out)("test run", "TestAdd ×5: 0 passed, 5 failed")
		p := TerminalProgress(out, "cases")
		p.Total(2)
		p.Step("64 commits")
		p.Done("64 commits: 1000/1000 right", true)
	}
	if buf.Len() != 0 {
		t.Errorf("printed to a buffer: %q", buf.String())
	}
	if b, err := os.ReadFile(file.Name()); err != nil || len(b) != 0 {
		t.Errorf("printed to a file: %q %v", b, err)
	}

	pty, tty := openPTY(t)
	StageLines(tty)("test run", "TestAdd ×5: 0 passed, 5 failed")
	p := TerminalProgress(tty, "cases")
	p.Total(2)
	p.Done("64 commits: 1000/1000 right", true)
	// A terminal that never shows the line fails the test, not hangs it.
	_ = pty.SetReadDeadline(time.Now().Add(time.Minute))
	got := make([]byte, 4096)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "1/2 cases") {
		n, err := pty.Read(got)
		if err != nil {
			t.Fatalf("read the terminal: %v (so far %q)", err, seen.String())
		}
		seen.Write(got[:n])
	}
	for _, want := range []string{"test run  TestAdd ×5: 0 passed, 5 failed", "64 commits: 1000/1000 right", "1/2 cases"} {
		if !strings.Contains(seen.String(), want) {
			t.Errorf("the terminal shows %q, want %q in it", seen.String(), want)
		}
	}
}
