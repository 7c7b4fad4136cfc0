package testsvc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
)

// NATSCluster is a cluster of real nats-server processes with JetStream,
// routed to one another on loopback; each node keeps its store and ports
// across Stop and Start.
type NATSCluster struct {
	t     testing.TB
	nodes []*process
	ports []int
}

// StartNATSCluster starts n nats-server nodes of one cluster and waits
// until JetStream answers through them (a meta leader is elected).
func StartNATSCluster(t testing.TB, n int) *NATSCluster {
	t.Helper()
	path := Need(t, "nats-server", "nats-server")
	c := &NATSCluster{t: t}
	routePorts := make([]int, n)
	var routes []string
	for i := range n {
		c.ports = append(c.ports, FreePort(t))
		routePorts[i] = FreePort(t)
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i]))
	}
	for i := range n {
		port := c.ports[i]
		p := &process{t: t, name: fmt.Sprintf("nats-server n%d", i), path: path,
			args: []string{"-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", t.TempDir(),
				"-n", fmt.Sprintf("n%d", i), "--cluster_name", "redfix",
				"--cluster", fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i]), "--routes", strings.Join(routes, ",")},
			// A node alone has no JetStream (no quorum): it is started
			// when it listens; the cluster's JetStream is waited for below.
			ready: func(ctx context.Context) error { return dial(ctx, loopback(port)) }}
		p.start()
		t.Cleanup(p.stop)
		c.nodes = append(c.nodes, p)
	}
	c.WaitJetStream()
	return c
}

// URLs are the nodes' client URLs.
func (c *NATSCluster) URLs() []string {
	var out []string
	for _, p := range c.ports {
		out = append(out, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	return out
}

// Stop kills node i (SIGKILL).
func (c *NATSCluster) Stop(i int) { c.nodes[i].stop() }

// Start starts node i again on its store and ports.
func (c *NATSCluster) Start(i int) {
	c.t.Helper()
	c.nodes[i].start()
}

// WaitJetStream waits until JetStream answers through the cluster and a
// stream with a copy on every node can be made.
func (c *NATSCluster) WaitJetStream() {
	c.t.Helper()
	Poll(c.t, 2*time.Minute, "the NATS cluster's JetStream makes a stream on every node", func() bool {
		nc, err := nats.Connect(strings.Join(c.URLs(), ","), nats.Timeout(time.Second))
		if err != nil {
			return false
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := js.AccountInfo(ctx); err != nil {
			return false
		}
		if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: "TESTSVC_PROBE", Subjects: []string{"testsvc.probe"}, Storage: jetstream.MemoryStorage, Replicas: len(c.nodes),
		}); err != nil {
			return false
		}
		return js.DeleteStream(ctx, "TESTSVC_PROBE") == nil
	})
}

// Output is what node i printed so far.
func (c *NATSCluster) Output(i int) string { return c.nodes[i].output() }

// RedisSentinel is a Redis primary, its replicas and three Sentinels
// watching them (Debian's redis-server and redis-sentinel), on loopback
// ports; a data node keeps its port across Stop and Start.
type RedisSentinel struct {
	t         testing.TB
	Master    string
	data      []*process
	dataPorts []int
	sentinels []int
}

// StartRedisSentinel starts a primary, replicas replicas of it and three
// Sentinels (a quorum of two), and waits until the Sentinels see every
// replica.
func StartRedisSentinel(t testing.TB, replicas int) *RedisSentinel {
	t.Helper()
	server := Need(t, "redis-server", "redis-server")
	sentinel := Need(t, "redis-sentinel", "redis-sentinel")
	r := &RedisSentinel{t: t, Master: "redfix"}
	for i := 0; i <= replicas; i++ {
		port := FreePort(t)
		args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", t.TempDir()}
		if i > 0 {
			args = append(args, "--replicaof", "127.0.0.1", strconv.Itoa(r.dataPorts[0]))
		}
		p := &process{t: t, name: fmt.Sprintf("redis-server r%d", i), path: server, args: args, ready: pingAt(loopback(port))}
		p.start()
		t.Cleanup(p.stop)
		r.data = append(r.data, p)
		r.dataPorts = append(r.dataPorts, port)
	}
	for i := range 3 {
		port := FreePort(t)
		dir := t.TempDir()
		conf := filepath.Join(dir, "sentinel.conf")
		text := fmt.Sprintf(`port %d
bind 127.0.0.1
dir %s
sentinel monitor %s 127.0.0.1 %d 2
sentinel down-after-milliseconds %s 1000
sentinel failover-timeout %s 5000
sentinel parallel-syncs %s 1
`, port, dir, r.Master, r.dataPorts[0], r.Master, r.Master, r.Master)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		p := &process{t: t, name: fmt.Sprintf("redis-sentinel s%d", i), path: sentinel, args: []string{conf}, ready: pingAt(loopback(port))}
		p.start()
		t.Cleanup(p.stop)
		r.sentinels = append(r.sentinels, port)
	}
	Poll(t, time.Minute, "the Sentinels see the primary's replicas", func() bool {
		for _, addr := range r.SentinelAddrs() {
			s := redis.NewSentinelClient(&redis.Options{Addr: addr})
			reps, err := s.Replicas(context.Background(), r.Master).Result()
			s.Close()
			if err != nil || len(reps) < replicas {
				return false
			}
		}
		return true
	})
	r.WaitReplicas(0, replicas)
	return r
}

// WaitReplicas waits until data node i, a primary, has n replicas online
// (in sync and streaming its writes). A node that comes back after a
// failover is turned into a replica by the Sentinels only after it has
// reported itself a primary for a while, and then copies the whole data
// set: under a loaded machine's scheduling that can take minutes, so the
// wait is long (it ends as soon as the replicas are online), and a wait
// that fails says what every node and Sentinel said last.
func (r *RedisSentinel) WaitReplicas(i, n int) {
	r.t.Helper()
	c := redis.NewClient(&redis.Options{Addr: loopback(r.dataPorts[i])})
	defer c.Close()
	PollSeeing(r.t, 3*time.Minute, fmt.Sprintf("redis r%d has %d replicas online", i, n), r.replication, func() bool {
		info, err := c.Info(context.Background(), "replication").Result()
		return err == nil && strings.Count(info, "state=online") >= n
	})
}

// replication is what each data node says of its replication, and what
// the first Sentinel says of the primary's replicas.
func (r *RedisSentinel) replication() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var b strings.Builder
	for i, p := range r.dataPorts {
		c := redis.NewClient(&redis.Options{Addr: loopback(p)})
		info, err := c.Info(ctx, "replication").Result()
		c.Close()
		fmt.Fprintf(&b, "\nr%d (%s): %s %v", i, loopback(p), strings.Join(strings.Fields(info), " "), err)
	}
	s := redis.NewSentinelClient(&redis.Options{Addr: r.SentinelAddrs()[0]})
	defer s.Close()
	reps, err := s.Replicas(ctx, r.Master).Result()
	fmt.Fprintf(&b, "\nsentinel s0's replicas: %v %v", reps, err)
	return b.String()
}

// SentinelAddrs are the Sentinels' host:port.
func (r *RedisSentinel) SentinelAddrs() []string {
	var out []string
	for _, p := range r.sentinels {
		out = append(out, loopback(p))
	}
	return out
}

// Primary is the data node the Sentinels name as the primary now, and its
// index (-1 when they name none of them).
func (r *RedisSentinel) Primary(ctx context.Context) (string, int) {
	s := redis.NewSentinelClient(&redis.Options{Addr: r.SentinelAddrs()[0]})
	defer s.Close()
	addr, err := s.GetMasterAddrByName(ctx, r.Master).Result()
	if err != nil || len(addr) != 2 {
		return "", -1
	}
	hp := loopback(atoi(addr[1]))
	for i, p := range r.dataPorts {
		if loopback(p) == hp {
			return hp, i
		}
	}
	return hp, -1
}

// Stop kills data node i (SIGKILL); it keeps no data.
func (r *RedisSentinel) Stop(i int) { r.data[i].stop() }

// Start starts data node i again on its port (as it was first started: a
// former primary comes back as a primary with no data, and the Sentinels
// make it a replica of the new one).
func (r *RedisSentinel) Start(i int) {
	r.t.Helper()
	r.data[i].start()
}

func pingAt(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer c.Close()
		return c.Ping(ctx).Err()
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
