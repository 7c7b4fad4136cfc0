package config

import (
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Logger builds the process's one logger from the configuration.
func (l Log) Logger() (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(l.Level)
	if err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	var zc zap.Config
	if l.Format == "json" {
		zc = zap.NewProductionConfig()
	} else {
		zc = zap.NewDevelopmentConfig()
		zc.DisableStacktrace = true
		zc.EncoderConfig.EncodeLevel = zapcore.CapitalLevelEncoder
	}
	zc.Level = zap.NewAtomicLevelAt(level)
	zc.OutputPaths = []string{"stderr"}
	log, err := zc.Build()
	if err != nil {
		return nil, fmt.Errorf("build logger: %w", err)
	}
	return log, nil
}
