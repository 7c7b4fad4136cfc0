// Package hostile runs the hostile-repository corpus (testdata/repos)
// through redfix as it runs in production: `bot serve` and `worker run` as
// processes of their own, against a real Redis, NATS and a git server on
// loopback (so that checkouts are work trees of mirrors), and `worker
// repair` with a scripted model over HTTP. Each scenario checks that
// nothing the repository planted runs outside the sandbox, that no host
// file and no secret comes out anywhere, that the patch holds only the
// agent's edits, and that a real fix is still published.
//
// TestBoundariesOff runs the same scenarios against a build with the
// boundaries switched off (the redfix_trusting tag) and shows that each
// check then fails: the checks are not vacuous.
package hostile

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/sandbox"
)

// The commands of a release build and of one with the boundaries off,
// shared with the other packages of the go test run (testsvc.Binaries).
var release, trusting testsvc.Binaries

// confined skips (or under CI, fails) where this host cannot confine: the
// corpus is about what happens outside the sandbox.
func confined(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the hostile corpus runs real processes for minutes; -short skips it")
	}
	if _, err := sandbox.New(context.Background(), sandbox.Config{Mode: sandbox.ModeRequired, CacheDir: t.TempDir()}); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must confine: %v", err)
		}
		t.Skipf("this host cannot confine: %v", err)
	}
}

// binaries are the commands of a release build, or of one with the
// boundaries off.
func binaries(t *testing.T, boundariesOff bool) (bot, worker string) {
	t.Helper()
	if boundariesOff {
		return trusting.Build(t, "redfix_trusting")
	}
	return release.Build(t)
}

// world is what a scenario plants and looks for: the marker file outside
// every sandbox, a host file that is no secret of redfix's, and the
// secrets the bot and worker hold.
type world struct {
	values
	Secrets map[string]string // environment variable → value
	// SecretFile holds a secret too, given to the commands as a _FILE.
	SecretFile, SecretFileText string
	// RootText is what RootFile holds; Shadow the first line of
	// /etc/shadow ("" when it cannot be read here).
	RootText, Shadow string
	// canary counts the connections its server (CanaryURL) accepted.
	canary *atomic.Int32
	// Index serves the Python scenarios' dependency as a package index.
	Index *pythontest.Index
}

func newWorld(t *testing.T) world {
	t.Helper()
	nonce := strings.ReplaceAll(t.Name(), "/", "-") + fmt.Sprint(os.Getpid())
	outside := t.TempDir()
	w := world{values: values{
		Marker:   filepath.Join(outside, "escaped"),
		HostFile: filepath.Join(outside, "host-private.txt"),
		HostText: "HOST-PRIVATE-" + nonce,
	}}
	if err := os.WriteFile(w.HostFile, []byte(w.HostText+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Secrets = map[string]string{
		"REDFIX_INGEST_TOKEN": "ingest-" + nonce,
		"REDFIX_READ_TOKEN":   "read-" + nonce,
		"OPENAI_API_KEY":      "sk-hostile-" + nonce + "-0123456789",
	}
	w.canary = new(atomic.Int32)
	canary := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.canary.Add(1)
		http.NotFound(rw, r)
	}))
	t.Cleanup(canary.Close)
	w.CanaryURL = canary.URL
	w.Victim = filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(w.Victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.Victim, "keep"), []byte("the victim's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.RootFile, w.RootText = rootOnlyFile(t, nonce)
	if data, err := os.ReadFile("/etc/shadow"); err == nil {
		w.Shadow, _, _ = strings.Cut(string(data), "\n")
	}
	fn, whl := pythontest.Wheel(t, "redfix-hostile-dep", "1.0", map[string]string{"redfix_hostile_dep/__init__.py": "VALUE = 1\n"})
	w.Index = pythontest.NewIndex(t, map[string][]byte{fn: whl})
	w.SecretFile = filepath.Join(t.TempDir(), "webhook-secret")
	w.SecretFileText = "whsec-" + nonce
	if err := os.WriteFile(w.SecretFile, []byte(w.SecretFileText+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// rootOnlyFile writes a file only its owner may read, outside /tmp (which
// every sandbox replaces with its own): root's, when the tests run as
// root. It returns its path and content.
func rootOnlyFile(t *testing.T, nonce string) (path, text string) {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "redfix-hostile-")
	if err != nil {
		dir = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path, text = filepath.Join(dir, "root-only"), "ROOT-ONLY-"+nonce
	if err := os.WriteFile(path, []byte(text+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, text
}

// canaryHits is how many connections the canary server accepted.
func (w world) canaryHits() int { return int(w.canary.Load()) }

// forRepo is the world as repository name sees it: a marker of its own,
// so that an escape is told to the scenario that caused it.
func (w world) forRepo(name string) values {
	v := w.values
	v.Marker = w.Marker + "-" + name
	return v
}

// escaped is what the markers hold (name's alone when given): empty when
// nothing ran outside.
func (w world) escaped(name ...string) string {
	pattern := w.Marker + "*"
	if len(name) > 0 {
		pattern = w.Marker + "-" + name[0]
	}
	var out strings.Builder
	files, _ := filepath.Glob(pattern)
	for _, f := range files {
		data, _ := os.ReadFile(f)
		out.Write(data)
	}
	return out.String()
}

// leaks are the secrets and host text found in outputs, by name.
func (w world) leaks(outputs map[string]string) []string {
	needles := map[string]string{"host file": w.HostText, "secret file": w.SecretFileText, "root-only file": w.RootText, "/etc/shadow": w.Shadow}
	for k, v := range w.Secrets {
		needles[k] = v
	}
	var found []string
	for where, text := range outputs {
		for what, needle := range needles {
			if needle != "" && strings.Contains(text, needle) {
				found = append(found, what+" in "+where)
			}
		}
	}
	return found
}

// env is the commands' environment: the host's, with the secrets.
func (w world) env(extra ...string) []string {
	env := os.Environ()
	for k, v := range w.Secrets {
		env = append(env, k+"="+v)
	}
	env = append(env, "REDFIX_WEBHOOK_SECRET_FILE="+w.SecretFile)
	return append(env, extra...)
}
