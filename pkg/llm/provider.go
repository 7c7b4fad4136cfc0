package llm

import (
	"fmt"

	"go.uber.org/zap"
)

// NewClient returns the client of cfg.Provider, its retries done by
// Retrying (backoff honouring Retry-After) rather than by the SDK.
func NewClient(cfg Config, log *zap.Logger) (Client, error) {
	retries := cfg.MaxRetries
	if retries < 0 {
		return nil, fmt.Errorf("llm: negative MaxRetries %d", retries)
	}
	cfg.MaxRetries = 0
	var (
		c   Client
		err error
	)
	switch cfg.Provider {
	case "", ProviderOpenAI:
		c, err = NewOpenAI(cfg)
	case ProviderAnthropic:
		c, err = NewAnthropic(cfg)
	default:
		return nil, fmt.Errorf("llm: unknown provider %q (want %s or %s)", cfg.Provider, ProviderOpenAI, ProviderAnthropic)
	}
	if err != nil {
		return nil, err
	}
	return NewRetrying(c, RetryConfig{MaxRetries: retries, Log: log, OnError: cfg.OnError}), nil
}
