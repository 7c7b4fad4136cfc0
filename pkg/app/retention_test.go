package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/task"
)

// The bot's retention loop removes a finished task from the task index
// once its retention has passed, and leaves a queued one.
func TestRunRetentionSweepsFinishedTasks(t *testing.T) {
	sys, cfg := startSystem(t, map[string]string{"REDFIX_REDIS_TASK_RETENTION": "200ms", "REDFIX_REDIS_RETENTION_SWEEP_INTERVAL": "1s"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if got := sys.Store.TaskRetention(); got != 200*time.Millisecond {
		t.Fatalf("the store's retention is %s, want the configured 200ms", got)
	}
	for _, tk := range []task.Task{
		{ID: "finished", Repo: "/srv/repo", Status: task.StatusDropped},
		{ID: "waiting", Repo: "/srv/repo", Status: task.StatusQueued},
	} {
		if err := sys.Store.SaveTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	rdb := sys.rdb
	indexed := func() int64 { return rdb.ZCard(ctx, cfg.Redis.Prefix+":tasks").Val() }
	if n := indexed(); n != 2 {
		t.Fatalf("%d tasks indexed, want 2", n)
	}
	work, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); sys.RunRetention(work, cfg) }()
	defer func() { stop(); <-done }()
	testsvc.Poll(t, time.Minute, "the finished task leaves the index", func() bool { return indexed() == 1 })
	if _, err := sys.Store.GetTask(ctx, "finished"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("the finished task: %v, want ErrNotFound", err)
	}
	if _, err := sys.Store.GetTask(ctx, "waiting"); err != nil {
		t.Errorf("the queued task: %v", err)
	}
}
