package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/retry"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/termsafe"
)

// replayTask is `bot replay --task ID`: the failure group of task ID
// started over (retry.Retrier), on the NATS and Redis the bot uses, as
// POST /api/v1/tasks/{id}/retry does. It creates no stream.
func replayTask(ctx context.Context, cfg config.Config, log *zap.Logger, id string, stdout io.Writer) error {
	if !cfg.Redis.External() {
		return Usage("replay --task: no Redis configured (redis.addr in --config, or REDFIX_REDIS_ADDR): the tasks are in the Redis the bot uses")
	}
	sys := &System{log: log}
	defer sys.Close()
	js, err := sys.startNATS(ctx, cfg)
	if err != nil {
		return fmt.Errorf("replay --task: %w", err)
	}
	jobs, err := queue.Bind(ctx, js, queueConfig(cfg), log.Named("queue"))
	if err != nil {
		return fmt.Errorf("replay --task: NATS at %s: %w: is it the NATS the bot uses?", sys.NATSURL, err)
	}
	rdb := redisClient(cfg, cfg.Redis.Addr)
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("replay --task: redis at %s: %w", cfg.Redis.Describe(), err)
	}
	st := store.New(rdb, cfg.Redis.Prefix)
	st.SetDurability(store.Durability{Replicas: cfg.Redis.WaitReplicas, Timeout: cfg.Redis.WaitTimeout})
	st.SetClaimTTLs(store.ClaimTTLs{Triage: cfg.Triage.ClaimTTL, Verdict: cfg.Triage.VerdictTTL})
	st.SetTaskRetention(cfg.Redis.TaskRetention)
	nt, err := retry.Retrier{State: st, Jobs: jobs}.Group(ctx, id, "bot replay --task")
	if err != nil {
		return fmt.Errorf("replay --task: %w", err)
	}
	log.Info("failure group retried", zap.String("task_id", id), zap.String("new_task", nt.ID), zap.String("fingerprint", nt.Fingerprint))
	// The task's text is the repository's (test names, reasons).
	return json.NewEncoder(termsafe.NewJSONWriter(stdout)).Encode(map[string]string{"retried": id, "task": nt.ID, "group": nt.Fingerprint, "status": string(nt.Status)})
}
