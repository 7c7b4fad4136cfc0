package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/task"
)

// A relative data_dir (docs/operations.md's own example, `data_dir: data`)
// triages a repository that a git daemon serves: its mirror is cloned under
// the data directory and the failing test reproduced, the task queued. Git
// runs in the mirrors' directory, so a mirror path left relative was taken
// from there a second time, and every remote report failed.
func TestRelativeDataDirTriagesRemoteRepositories(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	base := t.TempDir()
	sample, err := demo.Build(ctx, filepath.Join(base, "shop"))
	if err != nil {
		t.Fatal(err)
	}
	d := testsvc.StartGitDaemon(t, base)
	remote := d.URL("shop")

	t.Chdir(t.TempDir())
	yaml := fmt.Sprintf("data_dir: data\nhttp:\n  allow_repos: [%q]\ntriage:\n  reruns: 2\n", remote)
	if err := os.WriteFile("redfix.yaml", []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("redfix.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	obs, logs := observer.New(zapcore.WarnLevel)
	log := zap.New(zapcore.NewTee(zaptest.NewLogger(t).Core(), obs))
	sys, err := Start(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	work, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	events := make(chan TriageEvent, 8)
	go func() { done <- sys.RunTriage(work, cfg, func(o TriageEvent) { events <- o }) }()
	defer func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("triage loop: %v", err)
		}
	}()

	sub := ingest.Submission{ID: "relative-data-dir", Repo: remote, Commit: sample.Head, Good: sample.Good, Branch: "main", Report: sample.Report}
	if _, err := sys.Intake.Submit(ctx, sub); err != nil {
		t.Fatal(err)
	}
	var got TriageEvent
	testsvc.PollSeeing(t, 4*time.Minute, "the remote repository's report is triaged", func() string {
		var lines []string
		for _, e := range logs.All() {
			lines = append(lines, fmt.Sprintf("%s %v", e.Message, e.ContextMap()))
		}
		return strings.Join(lines, "\n")
	}, func() bool {
		for _, e := range logs.All() {
			if strings.Contains(fmt.Sprint(e.ContextMap()), "no such file or directory") {
				t.Fatalf("triage of %s with data_dir: data failed: %s %v", remote, e.Message, e.ContextMap())
			}
		}
		select {
		case got = <-events:
			return true
		default:
			return false
		}
	})
	if got.Status != task.StatusQueued {
		t.Fatalf("the failure group is %s (%s), want it queued", got.Status, got.Reason)
	}
	mirrors, err := filepath.Glob(filepath.Join("data", "mirrors-triage", "*"))
	if err != nil || len(mirrors) == 0 {
		t.Errorf("no mirror under data/mirrors-triage: %v", err)
	}
}
