package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A NATS cluster and Redis through Sentinel are read from the file, and
// the single-server forms are unchanged.
func TestClusterSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "redfix.yaml")
	yaml := `nats:
  urls: [nats://nats-0:4222, nats://nats-1:4222, nats://nats-2:4222]
  replicas: 3
redis:
  sentinel: {master: redfix, addrs: ["sentinel-0:26379", "sentinel-1:26379"]}
  wait_replicas: 1
  wait_timeout: 500ms
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, env(map[string]string{"REDFIX_REDIS_SENTINEL_PASSWORD": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NATS.URL != "nats://nats-0:4222,nats://nats-1:4222,nats://nats-2:4222" || cfg.NATS.Replicas != 3 {
		t.Fatalf("nats: %+v", cfg.NATS)
	}
	r := cfg.Redis
	if !r.External() || r.Sentinel.Master != "redfix" || len(r.Sentinel.Addrs) != 2 || r.Sentinel.Password != "s3cret" ||
		r.WaitReplicas != 1 || r.WaitTimeout != 500*time.Millisecond {
		t.Fatalf("redis: %+v", r)
	}
	if d := r.Describe(); d != "sentinel master redfix at sentinel-0:26379,sentinel-1:26379" {
		t.Fatalf("describe: %q", d)
	}
	if !strings.Contains(strings.Join(cfg.Secrets(), " "), "s3cret") {
		t.Fatal("the Sentinel password is not among the secrets")
	}

	def, err := Load("", env(map[string]string{"REDFIX_NATS_URL": "nats://one:4222", "REDFIX_REDIS_ADDR": "redis:6379"}))
	if err != nil {
		t.Fatal(err)
	}
	ha, err := Load("", env(map[string]string{
		"REDFIX_NATS_URL": "nats://one:4222", "REDFIX_REDIS_ADDR": "redis:6379",
		"REDFIX_NATS_URLS": "nats://a:4222, nats://b:4222", "REDFIX_NATS_REPLICAS": "3",
		"REDFIX_REDIS_SENTINEL_MASTER": "redfix", "REDFIX_REDIS_SENTINEL_ADDRS": "s0:26379,s1:26379,s2:26379", "REDFIX_REDIS_WAIT_REPLICAS": "1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if ha.NATS.URL != "nats://a:4222,nats://b:4222" || ha.NATS.Replicas != 3 || ha.Redis.Addr != "" ||
		len(ha.Redis.Sentinel.Addrs) != 3 || ha.Redis.WaitReplicas != 1 {
		t.Fatalf("cluster from the environment: %+v %+v", ha.NATS, ha.Redis)
	}
	if def.NATS.URL != "nats://one:4222" || def.NATS.Replicas != 1 || def.Redis.Describe() != "redis:6379" || def.Redis.WaitReplicas != 0 {
		t.Fatalf("single servers: %+v %+v", def.NATS, def.Redis)
	}
}

func TestClusterSettingsRejected(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		set        func(*Config)
	}{
		{"url and urls", "both set", func(c *Config) { c.NATS.URL, c.NATS.URLs = "nats://a:4222", []string{"nats://b:4222"} }},
		{"replicas alone", "needs a NATS cluster", func(c *Config) { c.NATS.Replicas = 3 }},
		{"replicas 7", "1 to 5", func(c *Config) { c.NATS.URLs, c.NATS.Replicas = []string{"nats://a:4222"}, 7 }},
		{"addr and sentinel", "set one of", func(c *Config) {
			c.Redis.Addr, c.Redis.Sentinel = "r:6379", RedisSentinel{Master: "m", Addrs: []string{"s:26379"}}
		}},
		{"sentinel without addrs", "needs master and addrs", func(c *Config) { c.Redis.Sentinel.Master = "m" }},
		{"cluster without hash tag", "hash tag", func(c *Config) { c.Redis.ClusterAddrs = []string{"r:6379"} }},
		{"cluster with wait", "not supported", func(c *Config) {
			c.Redis.ClusterAddrs, c.Redis.Prefix, c.Redis.WaitReplicas = []string{"r:6379"}, "{redfix}", 1
		}},
		{"wait too long", "1ms to 2s", func(c *Config) { c.Redis.Addr, c.Redis.WaitReplicas, c.Redis.WaitTimeout = "r:6379", 1, 5*time.Second }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.set(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
	ok := Default()
	ok.Redis.ClusterAddrs, ok.Redis.Prefix = []string{"r:6379"}, "{redfix}"
	if err := ok.Validate(); err != nil {
		t.Fatalf("a cluster with a hash-tagged prefix: %v", err)
	}
}
