package k8s_test

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/redfix/redfix/internal/testsvc"
)

// redisPolicy is the eviction policy the shipped redis.conf must set: none.
// Redis refuses writes at its cap, and redfix says so, rather than lose
// state it relies on (see redis.conf).
const redisPolicy = "noeviction"

// maxCapShare is the largest share of the container's memory limit that
// maxmemory may take: the rest is for what maxmemory does not count
// (fragmentation, client buffers, the pages a forked AOF rewrite copies).
const maxCapShare = 0.8

// redisContainer is the redis StatefulSet's redis container of r.
func redisContainer(t *testing.T, r rendered) corev1.Container {
	t.Helper()
	for _, ss := range objectsOf[*appsv1.StatefulSet](r) {
		if ss.Name != "redis" {
			continue
		}
		for _, c := range ss.Spec.Template.Spec.Containers {
			if c.Name == "redis" {
				return c
			}
		}
	}
	t.Fatalf("%s: no redis container in a StatefulSet redis", r.Dir)
	return corev1.Container{}
}

// podEnv is the container's environment as the kubelet gives it: values,
// the downward API's resource fields (rounded up to the divisor, as the
// kubelet does), and a stand-in for each secret.
func podEnv(c corev1.Container) ([]string, error) {
	var env []string
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.ValueFrom == nil:
		case e.ValueFrom.SecretKeyRef != nil:
			v = "pod-secret"
		case e.ValueFrom.ResourceFieldRef != nil:
			f := e.ValueFrom.ResourceFieldRef
			if f.ContainerName != "" && f.ContainerName != c.Name {
				return nil, fmt.Errorf("env %s: resource of container %s", e.Name, f.ContainerName)
			}
			name, ok := strings.CutPrefix(f.Resource, "limits.")
			q, set := c.Resources.Limits[corev1.ResourceName(name)]
			if !ok || !set {
				return nil, fmt.Errorf("env %s: %s is not a limit the container sets", e.Name, f.Resource)
			}
			div := f.Divisor
			if div.IsZero() {
				div = resource.MustParse("1")
			}
			v = strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(div.Value()))), 10)
		default:
			return nil, fmt.Errorf("env %s: a source the test does not know", e.Name)
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

// redisArgs are the arguments the container's command gives redis-server,
// found by running its shell command with the pod's environment and
// printing them instead.
func redisArgs(c corev1.Container) ([]string, error) {
	if len(c.Command) != 3 || c.Command[0] != "sh" || c.Command[1] != "-c" || !strings.Contains(c.Command[2], "exec redis-server ") {
		return nil, fmt.Errorf("command %q: want sh -c 'exec redis-server …'", c.Command)
	}
	env, err := podEnv(c)
	if err != nil {
		return nil, err
	}
	script := strings.Replace(c.Command[2], "exec redis-server ", `exec printf '%s\n' `, 1)
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("run the command's shell: %w", err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"), nil
}

// redisBytes reads a Redis memory size: a number with an optional unit
// (k, kb, m, mb, g, gb, as redis.conf reads them).
func redisBytes(s string) (int64, error) {
	m := regexp.MustCompile(`^(\d+)(k|kb|m|mb|g|gb)?$`).FindStringSubmatch(strings.ToLower(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a memory size", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, err
	}
	unit := map[string]int64{"": 1, "k": 1000, "kb": 1 << 10, "m": 1000 * 1000, "mb": 1 << 20, "g": 1000 * 1000 * 1000, "gb": 1 << 30}[m[2]]
	return n * unit, nil
}

// redisMemoryProblems lists what is wrong with Redis's memory cap and
// eviction policy in a container and its redis.conf; cap is maxmemory in
// bytes when it is set.
func redisMemoryProblems(c corev1.Container, conf string) (cap int64, problems []string) {
	limit, ok := c.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		return 0, []string{"the redis container has no memory limit"}
	}
	args, err := redisArgs(c)
	if err != nil {
		return 0, []string{err.Error()}
	}
	policies := regexp.MustCompile(`(?m)^\s*maxmemory-policy\s+(\S+)`).FindAllStringSubmatch(conf, -1)
	if len(policies) != 1 || policies[0][1] != redisPolicy {
		problems = append(problems, fmt.Sprintf("redis.conf sets maxmemory-policy %v, want it once: %s", policies, redisPolicy))
	}
	if regexp.MustCompile(`(?m)^\s*maxmemory\s`).MatchString(conf) {
		problems = append(problems, "redis.conf sets maxmemory: the command line derives it from the container's limit")
	}
	for i, a := range args {
		switch a {
		case "--maxmemory-policy":
			problems = append(problems, "the command line sets maxmemory-policy, over redis.conf's")
		case "--maxmemory":
			if i+1 >= len(args) {
				return 0, append(problems, "--maxmemory without a value")
			}
			if cap, err = redisBytes(args[i+1]); err != nil {
				return 0, append(problems, err.Error())
			}
		}
	}
	switch {
	case cap == 0:
		problems = append(problems, fmt.Sprintf("no maxmemory in %q: Redis would grow until the kernel kills it at the container's limit", args))
	case float64(cap) > maxCapShare*float64(limit.Value()):
		problems = append(problems, fmt.Sprintf("maxmemory %d bytes is over %.0f%% of the container's memory limit %s (%d bytes)", cap, 100*maxCapShare, limit.String(), limit.Value()))
	}
	return cap, problems
}

// In every overlay, Redis's memory cap is below the container's memory
// limit with room to spare, and at the cap it evicts nothing.
func TestRedisMemoryCapBelowLimit(t *testing.T) {
	for dir, r := range shipped(t) {
		c := redisContainer(t, r)
		conf := ""
		for _, cm := range objectsOf[*corev1.ConfigMap](r) {
			if v, ok := cm.Data["redis.conf"]; ok {
				conf = v
			}
		}
		cap, problems := redisMemoryProblems(c, conf)
		for _, p := range problems {
			t.Errorf("%s: %s", dir, p)
		}
		limit := c.Resources.Limits[corev1.ResourceMemory]
		t.Logf("%s: memory limit %s, maxmemory %d MiB, %s", dir, limit.String(), cap>>20, redisPolicy)
	}

	// Broken copies fail, naming what is wrong.
	r := shipped(t)["overlays/prod"]
	c := redisContainer(t, r)
	conf := shippedConfig(t, "redis.conf")
	for _, tc := range []struct {
		name   string
		change func(c *corev1.Container, conf *string)
		want   string
	}{
		{"no cap", func(c *corev1.Container, _ *string) {
			c.Command[2] = regexp.MustCompile(`--maxmemory "[^"]*" `).ReplaceAllString(c.Command[2], "")
		}, "no maxmemory"},
		{"a fixed cap over the limit", func(c *corev1.Container, _ *string) {
			c.Command[2] = regexp.MustCompile(`--maxmemory "[^"]*"`).ReplaceAllString(c.Command[2], "--maxmemory 4gb")
		}, "over 80% of the container's memory limit"},
		{"the whole limit", func(c *corev1.Container, _ *string) {
			c.Command[2] = strings.Replace(c.Command[2], "* 70 / 100", "", 1)
		}, "over 80% of the container's memory limit"},
		{"an eviction policy", func(_ *corev1.Container, conf *string) {
			*conf = strings.Replace(*conf, "maxmemory-policy noeviction", "maxmemory-policy volatile-lru", 1)
		}, "want it once: noeviction"},
		{"a policy on the command line", func(c *corev1.Container, _ *string) {
			c.Command[2] += " --maxmemory-policy allkeys-lru"
		}, "the command line sets maxmemory-policy"},
		{"no limit", func(c *corev1.Container, _ *string) { delete(c.Resources.Limits, corev1.ResourceMemory) }, "no memory limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := *c.DeepCopy()
			badConf := conf
			tc.change(&bad, &badConf)
			_, problems := redisMemoryProblems(bad, badConf)
			if !strings.Contains(strings.Join(problems, "; "), tc.want) {
				t.Fatalf("problems %q, want one saying %q", problems, tc.want)
			}
		})
	}
}

// redis-server itself, started by the prod overlay's command with the
// environment the pod gets, runs with the cap the test computed and the
// eviction policy of redis.conf.
func TestRedisServerRunsWithTheCap(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed (.ci/run installs it)")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	r := shipped(t)["overlays/prod"]
	c := redisContainer(t, r)
	want, problems := redisMemoryProblems(c, shippedConfig(t, "redis.conf"))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "redis.conf")
	shipped := strings.Replace(shippedConfig(t, "redis.conf"), "\ndir /data\n", "\ndir "+dir+"\n", 1)
	if err := os.WriteFile(conf, []byte(shipped), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freeLoopbackPort(t)
	env, err := podEnv(c)
	if err != nil {
		t.Fatal(err)
	}
	// The pod's command, with the config file, the port and the address
	// moved here.
	script := strings.Replace(c.Command[2], "/etc/redis/redis.conf", conf, 1) +
		fmt.Sprintf(" --port %d --bind 127.0.0.1 --daemonize no --appendonly no --save ''", port)
	script = strings.Replace(script, "exec redis-server ", "exec "+bin+" ", 1)
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), Password: "pod-secret"})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	testsvc.Poll(t, time.Minute, "redis-server answers", func() bool { return rdb.Ping(ctx).Err() == nil })
	got, err := rdb.ConfigGet(ctx, "maxmemory*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got["maxmemory"] != strconv.FormatInt(want, 10) || got["maxmemory-policy"] != redisPolicy {
		t.Fatalf("redis-server runs with maxmemory %s and policy %s, want %d and %s", got["maxmemory"], got["maxmemory-policy"], want, redisPolicy)
	}
	limit := c.Resources.Limits[corev1.ResourceMemory]
	t.Logf("prod: limit %s, redis-server's maxmemory %s bytes, policy %s", limit.String(), got["maxmemory"], got["maxmemory-policy"])
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
