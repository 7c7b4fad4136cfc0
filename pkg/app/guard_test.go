package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/redact"
	"github.com/redfix/redfix/pkg/sandbox"
)

const ownSecret = "own-bot-secret-0123"

func TestUnconfinedHostIsReportedLoudly(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no bwrap
	obs, logs := observer.New(zapcore.InfoLevel)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	ctx, st, err := confine(context.Background(), cfg, zap.New(obs))
	if err != nil {
		t.Fatal(err)
	}
	if st.Confined || sandbox.From(ctx) == nil {
		t.Fatalf("status %+v, box on context: %v", st, sandbox.From(ctx) != nil)
	}
	warned := logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("UNCONFINED").Len()
	if warned != 1 {
		t.Fatalf("want one loud warning, got %d: %v", warned, logs.All())
	}
	cfg.Sandbox.Mode = "required"
	if _, _, err := confine(context.Background(), cfg, zap.NewNop()); err == nil {
		t.Fatal("required confinement started on a host that cannot confine")
	}
}

func TestLogsAreRedacted(t *testing.T) {
	cfg := config.Default()
	cfg.HTTP.IngestToken = ownSecret
	cfg.Log.Format = "json"
	var buf bytes.Buffer
	log, err := logger(cfg, &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Warn("rejected token "+ownSecret, zap.String("header", "Bearer "+ownSecret))
	_ = log.Sync()
	if strings.Contains(buf.String(), ownSecret) || !strings.Contains(buf.String(), redact.Mark) {
		t.Fatalf("log: %s", buf.String())
	}
}

// `bot serve --config redfix.yaml`, a path relative to the working
// directory, keeps the sandbox: in mode required it starts confined, and
// the configuration file and the data directory stay hidden.
func TestRelativeConfigKeepsTheSandbox(t *testing.T) {
	if _, err := sandbox.New(context.Background(), sandbox.Config{Mode: sandbox.ModeRequired, CacheDir: t.TempDir()}); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must confine: %v", err)
		}
		t.Skipf("this host cannot confine: %v", err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	yaml := "data_dir: data\nhttp:\n  ingest_token: " + ownSecret + "\nsandbox:\n  mode: required\n"
	if err := os.WriteFile("redfix.yaml", []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("data", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("data", "state"), []byte("data-"+ownSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cl := newCommandLine("serve", &stderr, func(string) string { return "" })
	if err := cl.parse([]string{"--config", "redfix.yaml"}); err != nil {
		t.Fatal(err)
	}
	cfg, log, err := cl.load(&stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, st, err := confine(context.Background(), cfg, log)
	if err != nil {
		t.Fatalf("--config redfix.yaml: %v", err)
	}
	if !st.Confined {
		t.Fatalf("--config redfix.yaml: unconfined: %s", st)
	}
	ws := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := sandbox.Run(sandbox.WithTree(ctx, ws), sandbox.Cmd{Dir: ws, Args: []string{"sh", "-c",
		"cat " + filepath.Join(dir, "redfix.yaml") + " " + filepath.Join(dir, "data", "state") + "; echo ran"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "ran") || strings.Contains(res.Output, ownSecret) {
		t.Fatalf("the command read the configuration or the data directory, or did not run:\n%s", res.Output)
	}
}
