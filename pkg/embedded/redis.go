package embedded

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Redis is an in-process server speaking the Redis protocol, memory only.
// Every connection must authenticate (AUTH) with its password first.
type Redis struct {
	m        *miniredis.Miniredis
	password string
}

// StartRedis starts a Redis-protocol server on a free loopback port that
// requires a random password, made now. Keys' TTLs expire in real time, as
// they do on a real Redis.
func StartRedis() (*Redis, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	pw := secret()
	m.RequireAuth(pw)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("start embedded redis: %w", err)
	}
	return &Redis{m: m, password: pw}, nil
}

// Addr is the host:port clients connect to.
func (r *Redis) Addr() string { return r.m.Addr() }

// Password is the password clients authenticate with: for a client this
// process makes itself, or one it starts and hands the password to.
func (r *Redis) Password() string { return r.password }

// Client is a client of the server, with its password.
func (r *Redis) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: r.Addr(), Password: r.password})
}

// Close stops the server; its data is gone.
func (r *Redis) Close() { r.m.Close() }
