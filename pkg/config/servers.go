package config

import (
	"fmt"
	"strings"
	"time"
)

// RedisSentinel names a primary that Sentinel watches: go-redis asks the
// Sentinels at Addrs which server is the primary of Master, and asks again
// after a failover.
type RedisSentinel struct {
	Master string   `yaml:"master"`
	Addrs  []string `yaml:"addrs"`
	// Password logs in to the Sentinels (redis.password logs in to the
	// primary and replicas).
	Password string `yaml:"password"`
}

// Enabled reports whether Sentinel is configured.
func (s RedisSentinel) Enabled() bool { return s.Master != "" || len(s.Addrs) > 0 }

// External reports whether a Redis is configured (one server, Sentinel or
// a cluster); without one an embedded server is started.
func (r Redis) External() bool {
	return r.Addr != "" || r.Sentinel.Enabled() || len(r.ClusterAddrs) > 0
}

// Describe names the configured Redis for logs and errors, without
// credentials.
func (r Redis) Describe() string {
	switch {
	case r.Sentinel.Enabled():
		return fmt.Sprintf("sentinel master %s at %s", r.Sentinel.Master, strings.Join(r.Sentinel.Addrs, ","))
	case len(r.ClusterAddrs) > 0:
		return "cluster at " + strings.Join(r.ClusterAddrs, ",")
	}
	return r.Addr
}

// ServerURL is the NATS URL to connect to: nats.url, or nats.urls joined
// by commas; empty for an embedded server.
func (n NATS) ServerURL() string {
	if n.URL != "" || len(n.URLs) == 0 {
		return n.URL
	}
	return strings.Join(n.URLs, ",")
}

// normalizeServers folds nats.urls into nats.url, which the rest of redfix
// reads (a comma-separated list is a cluster's servers to NATS clients).
func (c *Config) normalizeServers() {
	c.NATS.URL = c.NATS.ServerURL()
}

// validateServers reports NATS and Redis settings that cannot work.
func (c Config) validateServers() []error {
	var errs []error
	if len(c.NATS.URLs) > 0 && c.NATS.URL != "" && c.NATS.URL != strings.Join(c.NATS.URLs, ",") {
		errs = append(errs, fmt.Errorf("nats.url and nats.urls are both set: choose one"))
	}
	for _, u := range c.NATS.URLs {
		if u == "" || strings.Contains(u, ",") {
			errs = append(errs, fmt.Errorf("nats.urls: %q: one URL each", u))
		}
	}
	if c.NATS.Replicas < 1 || c.NATS.Replicas > 5 {
		errs = append(errs, fmt.Errorf("nats.replicas must be 1 to 5, got %d", c.NATS.Replicas))
	}
	if c.NATS.Replicas > 1 && c.NATS.ServerURL() == "" {
		errs = append(errs, fmt.Errorf("nats.replicas %d needs a NATS cluster (nats.urls): the embedded server is alone", c.NATS.Replicas))
	}
	r := c.Redis
	if n := nonEmpty(r.Addr, strings.Join(r.ClusterAddrs, ","), r.Sentinel.Master+strings.Join(r.Sentinel.Addrs, ",")); n > 1 {
		errs = append(errs, fmt.Errorf("redis: set one of addr, sentinel or cluster_addrs"))
	}
	if r.Sentinel.Enabled() && (r.Sentinel.Master == "" || len(r.Sentinel.Addrs) == 0) {
		errs = append(errs, fmt.Errorf("redis.sentinel needs master and addrs"))
	}
	if len(r.ClusterAddrs) > 0 {
		if r.DB != 0 {
			errs = append(errs, fmt.Errorf("redis.db %d: a Redis Cluster has database 0 only", r.DB))
		}
		// The keys a transaction or a script touches together must share a
		// slot: the prefix carries a hash tag.
		if !hashTagged(r.Prefix) {
			errs = append(errs, fmt.Errorf("redis.prefix %q: a Redis Cluster needs a hash tag in it, such as {redfix}", r.Prefix))
		}
		if r.WaitReplicas > 0 {
			errs = append(errs, fmt.Errorf("redis.wait_replicas: not supported with a Redis Cluster (WAIT goes to one node); use Sentinel"))
		}
	}
	if r.WaitReplicas < 0 {
		errs = append(errs, fmt.Errorf("redis.wait_replicas must not be negative, got %d", r.WaitReplicas))
	}
	if r.WaitReplicas > 0 && (r.WaitTimeout < time.Millisecond || r.WaitTimeout > 2*time.Second) {
		// The client's read timeout (3 s) must outlast the wait.
		errs = append(errs, fmt.Errorf("redis.wait_timeout must be 1ms to 2s with wait_replicas, got %s", r.WaitTimeout))
	}
	return errs
}

// hashTagged reports whether a Redis Cluster hashes every key that starts
// with prefix by the same non-empty tag: the first {…} of the prefix.
func hashTagged(prefix string) bool {
	open := strings.IndexByte(prefix, '{')
	if open < 0 {
		return false
	}
	end := strings.IndexByte(prefix[open+1:], '}')
	return end > 0
}
