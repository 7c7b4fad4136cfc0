package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/redfix/redfix/pkg/config"
)

// loggedError is a command's error that its JSON log already holds: the
// program exits with its code and prints no plain line of it
// (internal/cli asks Logged).
type loggedError struct{ err error }

func (e *loggedError) Error() string { return e.err.Error() }
func (e *loggedError) Unwrap() error { return e.err }

// Logged reports that the error is in the log already.
func (e *loggedError) Logged() bool { return true }

// logFailure puts a long-running command's error (a start-up check that
// failed, a loop that stopped) in its log when the log is JSON, as one
// line a log shipper takes like the others, without a stack trace, and
// marks it logged; with the console format the program prints it.
func logFailure(cfg config.Config, log *zap.Logger, command string, err error) error {
	if err == nil || cfg.Log.Format != "json" {
		return err
	}
	log.WithOptions(zap.AddStacktrace(zapcore.FatalLevel)).Error(command+" stopped", zap.Error(err), zap.Int("exit_code", ExitCode(err)))
	return &loggedError{err: err}
}

// redisLogger writes go-redis's own lines (a pool's dial failures, a
// Sentinel's master switch) to the process's log, structured like the
// rest, at warn level.
type redisLogger struct{ log *zap.Logger }

func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	l.log.Warn(strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// logRedisTo sends go-redis's own lines to log (go-redis has one logger
// per process).
func logRedisTo(log *zap.Logger) { redis.SetLogger(redisLogger{log: log.Named("go-redis")}) }
