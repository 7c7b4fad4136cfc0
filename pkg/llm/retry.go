package llm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"go.uber.org/zap"
)

// RetryConfig says how Retrying retries.
type RetryConfig struct {
	// MaxRetries is how many more attempts follow a retryable failure
	// (429, 5xx, 408, 409, a transport failure); 0 makes one attempt.
	MaxRetries int
	// Base is the first backoff (0 means 1s); each retry doubles it, up to
	// Max (0 means 60s), with jitter. A server's Retry-After wins when it
	// asks for longer, and is honoured up to MaxRetryAfter (0 means 5m).
	Base, Max, MaxRetryAfter time.Duration
	// Sleep waits d or until ctx ends; nil uses a timer. Tests inject one.
	Sleep func(ctx context.Context, d time.Duration) error
	Log   *zap.Logger
	// OnError, when set, hears the class (ErrorClass) of every attempt
	// that failed, retried or not; not of those the caller's context
	// ended.
	OnError func(class string)
}

// Retrying is a Client that retries another's retryable failures with
// exponential backoff, honouring Retry-After.
type Retrying struct {
	next Client
	cfg  RetryConfig
}

var _ Client = (*Retrying)(nil)

// NewRetrying wraps c.
func NewRetrying(c Client, cfg RetryConfig) *Retrying {
	if cfg.Base <= 0 {
		cfg.Base = time.Second
	}
	if cfg.Max <= 0 {
		cfg.Max = time.Minute
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = 5 * time.Minute
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Retrying{next: c, cfg: cfg}
}

// Model is the wrapped client's model.
func (r *Retrying) Model() string { return r.next.Model() }

// Chat calls the wrapped client until it succeeds, fails for good, or the
// retries are spent; the last error is returned, saying how many attempts
// were made.
func (r *Retrying) Chat(ctx context.Context, req Request) (Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := r.next.Chat(ctx, req)
		if err != nil && ctx.Err() == nil && r.cfg.OnError != nil {
			r.cfg.OnError(ErrorClass(err))
		}
		if err == nil || !IsRetryable(err) || ctx.Err() != nil {
			return resp, err
		}
		if attempt >= r.cfg.MaxRetries {
			if attempt > 0 {
				err = fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return resp, err
		}
		wait := r.Backoff(attempt, err)
		r.cfg.Log.Info("model call failed; retrying", zap.String("model", r.next.Model()),
			zap.Int("attempt", attempt+1), zap.Duration("wait", wait), zap.Error(err))
		if serr := r.cfg.Sleep(ctx, wait); serr != nil {
			return resp, fmt.Errorf("waiting to retry (%w): %w", serr, err)
		}
	}
}

// Backoff is the wait before retry number attempt+1 after err: the
// server's Retry-After when it asks for at least the exponential backoff
// (capped at MaxRetryAfter), otherwise Base·2^attempt capped at Max, with up
// to a quarter of jitter.
func (r *Retrying) Backoff(attempt int, err error) time.Duration {
	d := r.cfg.Base << min(attempt, 30)
	if d <= 0 || d > r.cfg.Max {
		d = r.cfg.Max
	}
	d -= time.Duration(rand.Int64N(int64(d)/4 + 1))
	var apiErr *APIError
	if asAPIError(err, &apiErr) && apiErr.RetryAfter > 0 {
		return min(max(apiErr.RetryAfter, d), r.cfg.MaxRetryAfter)
	}
	return d
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
