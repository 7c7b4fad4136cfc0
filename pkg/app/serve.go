package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/server"
)

// Serve is `bot serve`: the triage service until ctx ends, the HTTP server
// and the triage loop (runBot).
func Serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cl := newCommandLine("serve", stderr, os.Getenv)
	if err := cl.parse(args); err != nil {
		return err
	}
	cfg, log, err := cl.load(stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	return logFailure(cfg, log, "bot serve", serve(ctx, cfg, log))
}

// serve is `bot serve` once its configuration and log are made.
func serve(ctx context.Context, cfg config.Config, log *zap.Logger) error {
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
	// Tasks stored before the task API's repository filter had its index.
	if n, err := sys.Store.IndexTasksByRepo(ctx); err != nil {
		log.Warn("index tasks by repository: the task API's repo filter misses tasks stored before this version", zap.Error(err))
	} else if n > 0 {
		log.Info("indexed the stored tasks by repository", zap.Int("tasks", n))
	}
	ln, err := listen(cfg, cfg.HTTP.Addr, log)
	if err != nil {
		return err
	}
	warnSecurity(cfg, log)
	log.Info("bot serving", zap.String("addr", ln.Addr().String()), zap.String("nats", sys.NATSURL), zap.String("redis", sys.RedisAddr), zap.Bool("model", cfg.LLM.Enabled()), zap.String("sandbox", sbox.String()))
	return runBot(ctx, sys, cfg, ln, log)
}

// runBot serves the bot's HTTP API on ln and runs the triage loop, the
// retention sweep, the GitHub resync and the pass over the open pull
// requests (System.Keeper) until ctx ends or one of them
// fails. Shutdown is staged: the server stops taking requests, those in
// flight get the grace period, then the loops stop (a report being triaged
// is redelivered to another instance); it returns once all have ended.
func runBot(ctx context.Context, sys *System, cfg config.Config, ln net.Listener, log *zap.Logger) error {
	keep, err := sys.Keeper(cfg)
	if err != nil {
		return err
	}
	srv := server.HTTPServer(sys.Handler(cfg), server.DefaultTimeouts)
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http: %w", err)
		}
	}()
	go func() {
		defer wg.Done()
		if err := sys.RunTriage(work, cfg, nil); err != nil {
			errc <- fmt.Errorf("triage loop: %w", err)
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		sys.RunRetention(work, cfg)
	}()
	if rs := sys.Resync(cfg); rs != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = rs.Run(work, cfg.GitHub.ResyncInterval)
		}()
	}
	if keep != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keep.Run(work, cfg.GitHub.KeepInterval)
		}()
	}
	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case runErr = <-errc:
		log.Error("stopping", zap.Error(runErr))
	}
	grace, cancel := context.WithTimeout(context.Background(), cfg.HTTP.GracePeriod)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		log.Warn("http shutdown", zap.Error(err))
	}
	stopWork()
	wg.Wait()
	return runErr
}
