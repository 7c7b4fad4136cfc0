package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/task"
)

// At its memory cap, with maxmemory-policy noeviction as the shipped
// redis.conf sets it, Redis refuses writes: the store's errors then say
// that the memory cap was reached, whatever the write (a command, a
// script, a transaction), and are counted; reads go on.
func TestMemoryFullErrors(t *testing.T) {
	r := testsvc.StartRedis(t, "")
	rdb := r.Client()
	t.Cleanup(func() { rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := New(rdb, "memtest")
	if err := s.SaveTask(ctx, task.Task{ID: "before", Status: task.StatusQueued, Repo: repoA}); err != nil {
		t.Fatal(err)
	}
	// A transaction Redis aborts for another reason is not called full.
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "NOSUCHCOMMAND")
		return nil
	})
	if err == nil || errors.Is(err, ErrMemoryFull) {
		t.Fatalf("a transaction with an unknown command: %v, want an error that is not ErrMemoryFull", err)
	}

	// Redis holds 4 MiB more than its cap allows: every write is refused
	// (a cap just reached lets small writes through while the room freed
	// by a refused request lasts).
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	filler := strings.Repeat("x", 64<<10)
	for i := range 64 {
		must(rdb.Set(ctx, fmt.Sprint("filler:", i), filler, 0).Err())
	}
	used := usedMemory(t, rdb)
	if used <= 4<<20 {
		t.Fatalf("Redis uses %d bytes, want more than 4 MiB", used)
	}
	must(rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	must(rdb.ConfigSet(ctx, "maxmemory", fmt.Sprint(used-(4<<20))).Err())
	var counted int64

	for name, write := range map[string]func() error{
		"save task (watched transaction)": func() error {
			return s.SaveTask(ctx, task.Task{ID: "after", Status: task.StatusQueued, Repo: repoA})
		},
		"set status (watched transaction)": func() error { return s.SetStatus(ctx, "before", task.StatusRunning, "") },
		"claim group (script)": func() error {
			_, _, err := s.ClaimGroup(ctx, "fp", "after")
			return err
		},
		"record run (transaction)": func() error { return s.RecordRun(ctx, "pkg.TestA", true) },
		"add occurrence (command)": func() error {
			_, err := s.AddOccurrence(ctx, "fp")
			return err
		},
		"set (a command on the client)": func() error { return rdb.Set(ctx, "k", "v", 0).Err() },
	} {
		err := write()
		if !errors.Is(err, ErrMemoryFull) || !strings.Contains(err.Error(), "memory cap (maxmemory) is reached") {
			t.Errorf("%s at the cap: %v, want ErrMemoryFull", name, err)
		}
		if counted++; s.MemoryFullErrors() != counted {
			t.Errorf("%s: %d refused writes counted, want %d", name, s.MemoryFullErrors(), counted)
		}
	}
	if tk, err := s.GetTask(ctx, "before"); err != nil || tk.Status != task.StatusQueued {
		t.Errorf("a read at the cap: %+v, %v", tk, err)
	}

	must(rdb.ConfigSet(ctx, "maxmemory", "0").Err())
	if err := s.SaveTask(ctx, task.Task{ID: "after", Status: task.StatusQueued, Repo: repoA}); err != nil {
		t.Fatalf("save once the cap is lifted: %v", err)
	}
	if s.MemoryFullErrors() != counted {
		t.Errorf("%d refused writes counted after the cap was lifted, want still %d", s.MemoryFullErrors(), counted)
	}
}

// usedMemory is INFO memory's used_memory.
func usedMemory(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("INFO memory has no used_memory:\n%s", info)
	return 0
}
