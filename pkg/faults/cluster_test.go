package faults

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/stream"
	"github.com/redfix/redfix/pkg/task"
)

// clusterGroups is how many failure groups the cluster test's reports make:
// one per repository (clones of the demo's sample).
const clusterGroups = 3

// clusterSetup is where the cluster test's processes find their servers.
type clusterSetup struct {
	natsURLs        []string
	replicas        int
	sentinelMaster  string   // a primary found through
	sentinelAddrs   []string // these Sentinels
	waitReplicas    int
	prefix, pubDir  string
	allow           string
	httpAddr        string
	reportAckWait   time.Duration
	jobAckWait      time.Duration
	workerHeartbeat time.Duration
}

// yaml is the configuration file of one bot or worker.
func (c clusterSetup) yaml() string {
	q := func(ss []string) string {
		var out []string
		for _, s := range ss {
			out = append(out, fmt.Sprintf("%q", s))
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	redisLine := fmt.Sprintf("redis: {sentinel: {master: %q, addrs: %s}, prefix: %q, wait_replicas: %d, wait_timeout: 2s}",
		c.sentinelMaster, q(c.sentinelAddrs), c.prefix, c.waitReplicas)
	return fmt.Sprintf(`log: {level: info, format: console}
http: {addr: %q, allow_repos: [%q]}
nats: {urls: %s, replicas: %d, ack_wait: %s, max_deliver: 20}
%s
triage: {reruns: 2, claim_ttl: 20s, report_ack_wait: %s, report_retry_delay: 1s}
worker: {slots: 1, heartbeat: %s}
publish: {mode: local, dir: %q}
startup_wait: 1m
`, c.httpAddr, c.allow, q(c.natsURLs), c.replicas, c.jobAckWait, redisLine, c.reportAckWait, c.workerHeartbeat, c.pubDir)
}

func (c clusterSetup) write(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "redfix.yaml")
	if err := os.WriteFile(p, []byte(c.yaml()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// clusterRepos are clusterGroups clones of the demo's sample: each is a
// failure group of its own.
func clusterRepos(t *testing.T) (demo.Sample, []string) {
	t.Helper()
	s := sample(t)
	root := t.TempDir()
	var repos []string
	for i := range clusterGroups {
		dir := filepath.Join(root, fmt.Sprint("repo-", i))
		if out, err := exec.Command("git", "clone", "-q", s.Dir, dir).CombinedOutput(); err != nil {
			t.Fatalf("clone the sample: %v\n%s", err, out)
		}
		repos = append(repos, dir)
	}
	return s, repos
}

// postReport posts one report of repo on the sample's head to the bot at
// base; it reports whether the bot accepted it (a bot being killed may
// not).
func postReport(base, repo string, s demo.Sample, rep []byte) bool {
	u := base + "/api/v1/reports?repo=" + url.QueryEscape(repo) + "&commit=" + s.Head + "&good=" + s.Good
	resp, err := httpClient.Post(u, "application/json", bytes.NewReader(rep))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusAccepted
}

// clusterState reads what the test checks at the end, from the servers.
type clusterState struct {
	t   *testing.T
	js  jetstream.JetStream
	rdb redis.UniversalClient
	pfx string
	dir string
}

// settled reports whether every stored report and job was settled: none
// waiting, none delivered and not yet acknowledged.
func (c clusterState) settled(ctx context.Context, streamName, consumer string) bool {
	cons, err := c.js.Consumer(ctx, streamName, consumer)
	if err != nil {
		return false
	}
	info, err := cons.Info(ctx)
	return err == nil && info.NumPending == 0 && info.NumAckPending == 0
}

// describe says where the run stands: each consumer's waiting and
// unacknowledged messages, parked messages, published groups and pull
// requests.
func (c clusterState) describe(ctx context.Context) string {
	cons := func(streamName, consumer string) string {
		cn, err := c.js.Consumer(ctx, streamName, consumer)
		if err != nil {
			return fmt.Sprintf("%s: %v", streamName, err)
		}
		info, err := cn.Info(ctx)
		if err != nil {
			return fmt.Sprintf("%s: %v", streamName, err)
		}
		return fmt.Sprintf("%s: %d waiting, %d unacknowledged, %d redelivered", streamName, info.NumPending, info.NumAckPending, info.NumRedelivered)
	}
	parked, err := c.parked(ctx)
	return fmt.Sprintf("%s; %s; parked %d (%v); published groups %d; pull requests %v; tasks: %s",
		cons(ingest.DefaultStream, ingest.DefaultConsumer), cons(queue.DefaultStream, queue.DefaultConsumer), parked, err, c.published(ctx), c.pullRequests(), c.tasks(ctx))
}

// tasks says what the store holds of each task (a group missing at the end
// is one with no task, or one whose task stopped short of publishing).
func (c clusterState) tasks(ctx context.Context) string {
	tasks, err := store.New(c.rdb, c.pfx).ListTasks(ctx, 100)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, tk := range tasks {
		out = append(out, fmt.Sprintf("%s %s (%s) %s %q updated %s", tk.ID, filepath.Base(tk.Repo), task.Short(tk.Fingerprint), tk.Status, tk.Reason, tk.UpdatedAt.Format(time.TimeOnly)))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}

// parked is how many messages the dead-letter stream holds.
func (c clusterState) parked(ctx context.Context) (uint64, error) {
	s, err := c.js.Stream(ctx, stream.DefaultDeadStream)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// published is how many groups the store records as published.
func (c clusterState) published(ctx context.Context) int {
	keys, err := c.rdb.Keys(ctx, c.pfx+":published:*").Result()
	if err != nil {
		return -1
	}
	return len(keys)
}

// pullRequests are the local pull requests' directories.
func (c clusterState) pullRequests() []string {
	entries, _ := os.ReadDir(c.dir)
	var prs []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(c.dir, e.Name(), publish.FilePullRequest)); err == nil {
			prs = append(prs, e.Name())
		}
	}
	return prs
}

// Two bots and two workers (the real binaries, as processes) on a
// three-node NATS cluster (R3 streams) and a Redis primary with a replica
// and three Sentinels: while reports of three failure groups arrive, one
// NATS node is killed and started again, the Redis primary is killed (the
// Sentinels promote the replica; the old primary comes back as a replica)
// and one bot is killed. Every accepted report is triaged, every group
// gets exactly one pull request, and nothing is left in flight or parked.
func TestClusterSurvivesNodeLoss(t *testing.T) {
	wholeRun(t)
	began := time.Now()
	nc := testsvc.StartNATSCluster(t, 3)
	rs := testsvc.StartRedisSentinel(t, 1)
	s, repos := clusterRepos(t)
	failing, _ := soakReports(s.Report)
	setup := clusterSetup{
		natsURLs: nc.URLs(), replicas: 3,
		sentinelMaster: rs.Master, sentinelAddrs: rs.SentinelAddrs(), waitReplicas: 1,
		prefix: "cluster", pubDir: t.TempDir(), allow: filepath.Dir(repos[0]) + "/**",
		reportAckWait: 5 * time.Second, jobAckWait: 6 * time.Second, workerHeartbeat: time.Second,
	}
	runCluster(t, setup, repos, s, failing, clusterFaults{
		nats: nc, redis: rs,
	}, began)
}

// wholeRun skips a whole-run fault test under -short: it runs a dozen
// processes for minutes.
func wholeRun(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a whole set of processes for minutes: run without -short")
	}
}

// clusterBudget bounds a whole run once its binaries are built: on a
// loaded 2-core machine it takes a few minutes; past this it fails saying
// what it waited for, long before go test's own timeout.
const clusterBudget = 12 * time.Minute

// clusterRun is a run's budget and the processes that must stay up.
type clusterRun struct {
	t     *testing.T
	sw    *testsvc.Stopwatch
	procs []*proc
}

// poll waits until cond holds, for at most what is left of the run's
// budget; a process that exits by itself fails the test at once, with the
// end of its output.
func (r *clusterRun) poll(what string, cond func() bool) {
	r.t.Helper()
	testsvc.PollWithin(r.t, r.sw, clusterBudget, what+" (within the run's budget)", func() bool {
		for _, p := range r.procs {
			if p.exited() {
				p.told.Store(true)
				r.t.Fatalf("%s exited by itself while waiting until %s; the end of its output:\n%s", p.name, what, p.tail(4000))
			}
		}
		return cond()
	})
}

// clusterFaults are the servers whose nodes runCluster kills (nil: none).
type clusterFaults struct {
	nats  *testsvc.NATSCluster
	redis *testsvc.RedisSentinel
}

func runCluster(t *testing.T, setup clusterSetup, repos []string, s demo.Sample, failing func(int) []byte, f clusterFaults, began time.Time) {
	ctx := context.Background()
	botBin, workerBin := binary(t, "bot"), binary(t, "worker")
	run := &clusterRun{t: t, sw: testsvc.NewStopwatch()}
	var bases []string
	var bots []*proc
	for range 2 {
		b := setup
		b.httpAddr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		p := startProc(t, botBin, t.TempDir(), b.write(t), "serve")
		bots = append(bots, p)
		run.procs = append(run.procs, p)
		bases = append(bases, "http://"+b.httpAddr)
	}
	for _, base := range bases {
		run.poll(base+" answers /healthz", func() bool { return get(base+"/healthz") == http.StatusOK })
	}
	for range 2 {
		w := setup
		w.httpAddr = "127.0.0.1:0"
		run.procs = append(run.procs, startProc(t, workerBin, t.TempDir(), w.write(t), "run"))
	}
	started := time.Since(began)

	reports, accepted := 0, 0
	send := func(bots []string) {
		for i, repo := range repos {
			reports++
			if postReport(bots[(reports+i)%len(bots)], repo, s, failing(reports)) {
				accepted++
			}
		}
	}
	faults := 0
	var recovered []string
	send(bases)

	if f.nats != nil {
		// A NATS node dies while reports arrive, and comes back.
		f.nats.Stop(1)
		faults++
		send(bases)
		start := time.Now()
		f.nats.Start(1)
		f.nats.WaitJetStream()
		recovered = append(recovered, fmt.Sprintf("nats node back in %s", time.Since(start).Round(time.Millisecond)))
	}
	if f.redis != nil {
		// The Redis primary dies: the Sentinels promote the replica, and
		// the old primary comes back as the new one's replica (only once
		// the promotion is done: an empty primary back too soon would be
		// copied over its replica).
		_, old := f.redis.Primary(ctx)
		f.redis.Stop(old)
		faults++
		start := time.Now()
		var now int
		run.poll("the Sentinels promote the replica", func() bool {
			_, now = f.redis.Primary(ctx)
			return now >= 0 && now != old
		})
		recovered = append(recovered, fmt.Sprintf("redis primary promoted in %s", time.Since(start).Round(time.Millisecond)))
		send(bases)
		f.redis.Start(old)
		f.redis.WaitReplicas(now, 1)
		recovered = append(recovered, fmt.Sprintf("redis replica back in %s", time.Since(start).Round(time.Millisecond)))
	}
	// A bot dies (SIGKILL) while it holds reports; the other triages them
	// after the report ack wait.
	send(bases)
	bots[0].kill9(t)
	faults++
	send(bases[1:])

	conn, err := nats.Connect(strings.Join(setup.natsURLs, ","), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	js, err := jetstream.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: setup.sentinelMaster, SentinelAddrs: setup.sentinelAddrs})
	t.Cleanup(func() { _ = rdb.Close() })
	st := clusterState{t: t, js: js, rdb: rdb, pfx: setup.prefix, dir: setup.pubDir}

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("at the end: %s", st.describe(ctx))
		}
	})

	drain := time.Now()
	run.sw.Lap(0)
	// Wall-clock times, to set beside the processes' logs when it fails.
	t.Logf("%s: the last fault is done (%s of the run's budget counted); waiting for the run to drain", drain.Format(time.TimeOnly), run.sw.Ran().Round(time.Second))
	// The workers' repairs run the sample's tests: a loaded machine makes
	// each take minutes.
	run.poll("every report triaged and every group published", func() bool {
		return st.settled(ctx, ingest.DefaultStream, ingest.DefaultConsumer) &&
			st.published(ctx) == len(repos) &&
			st.settled(ctx, queue.DefaultStream, queue.DefaultConsumer)
	})
	recovered = append(recovered, fmt.Sprintf("drained %s after the last fault", time.Since(drain).Round(time.Millisecond)))
	if prs := st.pullRequests(); len(prs) != len(repos) {
		t.Fatalf("pull requests %v, want exactly one for each of the %d groups", prs, len(repos))
	}
	if n, err := st.parked(ctx); err != nil || n != 0 {
		t.Fatalf("parked messages: %d (%v), want none", n, err)
	}
	if accepted == 0 {
		t.Fatal("no report was accepted")
	}
	t.Logf("reports %d (accepted %d, %d bytes each), groups %d, pull requests %d, faults %d; %s; bots up and workers started %s in, whole run %s",
		reports, accepted, len(failing(1)), len(repos), len(st.pullRequests()), faults, strings.Join(recovered, ", "), started.Round(time.Second), time.Since(began).Round(time.Second))
	t.Logf("redis memory by kind of key (MEMORY USAGE): %s", st.memoryByKind(ctx))
}

// memoryByKind sums MEMORY USAGE over the store's keys by their kind (the
// part after the prefix: task, group, published, …), with their count.
func (c clusterState) memoryByKind(ctx context.Context) string {
	keys, err := c.rdb.Keys(ctx, c.pfx+":*").Result()
	if err != nil {
		return err.Error()
	}
	bytes, count := map[string]int64{}, map[string]int{}
	var kinds []string
	for _, k := range keys {
		kind, _, _ := strings.Cut(strings.TrimPrefix(k, c.pfx+":"), ":")
		n, err := c.rdb.MemoryUsage(ctx, k).Result()
		if err != nil {
			continue
		}
		if count[kind] == 0 {
			kinds = append(kinds, kind)
		}
		bytes[kind] += n
		count[kind]++
	}
	sort.Strings(kinds)
	var out []string
	for _, k := range kinds {
		out = append(out, fmt.Sprintf("%s %d B in %d keys", k, bytes[k], count[k]))
	}
	return strings.Join(out, "; ")
}
