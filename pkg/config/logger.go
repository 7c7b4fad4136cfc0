package config

import (
	"fmt"
	"io"
	"os"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Logger builds the process's one logger from the configuration, writing
// to standard error.
func (l Log) Logger() (*zap.Logger, error) { return l.Build(os.Stderr, nil) }

// Build builds the logger writing to w. wrap, when set, wraps the core
// that encodes and writes (redaction goes there, under any sampling).
//
// In JSON format, repeated debug and info lines are sampled (the first 100
// of a message each second, then one in 100); warnings and errors never
// are: every rejection and every failure reaches the log.
func (l Log) Build(w io.Writer, wrap func(zapcore.Core) zapcore.Core) (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(l.Level)
	if err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	if wrap == nil {
		wrap = func(c zapcore.Core) zapcore.Core { return c }
	}
	out := zapcore.Lock(zapcore.AddSync(w))
	opts := []zap.Option{zap.AddCaller(), zap.ErrorOutput(out)}
	leaf := func(enc zapcore.Encoder, enabled zapcore.LevelEnabler) zapcore.Core {
		return wrap(zapcore.NewCore(enc, out, enabled))
	}
	var core zapcore.Core
	if l.Format == "json" {
		ec := zap.NewProductionEncoderConfig()
		ec.EncodeTime = rfc3339UTC
		enc := zapcore.NewJSONEncoder(ec)
		low := leaf(enc, zap.LevelEnablerFunc(func(lv zapcore.Level) bool { return lv >= level && lv < zapcore.WarnLevel }))
		high := leaf(enc.Clone(), zap.LevelEnablerFunc(func(lv zapcore.Level) bool { return lv >= level && lv >= zapcore.WarnLevel }))
		core = zapcore.NewTee(zapcore.NewSamplerWithOptions(low, time.Second, 100, 100), high)
		opts = append(opts, zap.AddStacktrace(zapcore.ErrorLevel))
	} else {
		ec := zap.NewDevelopmentEncoderConfig()
		ec.EncodeLevel = zapcore.CapitalLevelEncoder
		core = leaf(zapcore.NewConsoleEncoder(ec), level)
		opts = append(opts, zap.Development())
	}
	return zap.New(core, opts...), nil
}

// rfc3339UTC writes a JSON line's ts as an RFC 3339 time in UTC to the
// millisecond ("2026-11-25T14:03:07.412Z"), which log shippers and
// Elasticsearch read as a date (zap's production default is seconds since
// the epoch, a float).
func rfc3339UTC(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString(t.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
}
