package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/sourcegraph/conc"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
)

// WorkerRun is `worker run`: it consumes repair jobs until ctx ends. A job
// in flight when ctx ends is handed back to the queue for another worker.
func WorkerRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cl := newCommandLine("run", stderr, os.Getenv)
	if err := cl.parse(args); err != nil {
		return err
	}
	cfg, log, err := cl.load(stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	return logFailure(cfg, log, "worker run", workerRun(ctx, cfg, log))
}

// workerRun is `worker run` once its configuration and log are made.
func workerRun(ctx context.Context, cfg config.Config, log *zap.Logger) error {
	if cfg.NATS.URL == "" || !cfg.Redis.External() {
		return Usage("worker run needs a NATS server and a Redis (nats.url or nats.urls, redis.addr, redis.sentinel or redis.cluster_addrs, or REDFIX_NATS_URL, REDFIX_REDIS_ADDR); `bot demo` runs everything in one process")
	}
	defer limitMemory(cfg, log)()
	ctx, sbox, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	sweep(cfg, log)
	sys, err := Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer sys.Close()
	sys.SetSandbox(sbox)
	pipe, err := sys.NewPipeline(cfg)
	if err != nil {
		return err
	}
	if cfg.Worker.MetricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.Worker.MetricsAddr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.Worker.MetricsAddr, err)
		}
		srv := &http.Server{Handler: sys.OpsHandler(), ReadHeaderTimeout: 10 * time.Second}
		var ops conc.WaitGroup
		ops.Go(func() { _ = srv.Serve(ln) })
		defer func() {
			_ = srv.Close()
			ops.Wait()
		}()
		log.Info("worker metrics", zap.String("addr", ln.Addr().String()))
	}
	log.Info("worker consuming", zap.Int("slots", cfg.Worker.Slots), zap.String("policy", pipe.Policy), zap.String("sandbox", sbox.String()))
	return sys.RunWorker(ctx, cfg, pipe)
}
