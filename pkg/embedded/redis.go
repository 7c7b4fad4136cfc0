package embedded

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
)

// Redis is an in-process server speaking the Redis protocol, memory only.
type Redis struct {
	m *miniredis.Miniredis
}

// StartRedis starts a Redis-protocol server on a free loopback port. Keys'
// TTLs expire in real time, as they do on a real Redis.
func StartRedis() (*Redis, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("start embedded redis: %w", err)
	}
	return &Redis{m: m}, nil
}

// Addr is the host:port clients connect to.
func (r *Redis) Addr() string { return r.m.Addr() }

// Close stops the server; its data is gone.
func (r *Redis) Close() { r.m.Close() }
