package k8s_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/redfix/redfix/pkg/config"
)

// haProblems lists what keeps the ha overlay from surviving the loss of
// one node: NATS not a routed three-node cluster, streams with fewer copies
// than nodes, a quorum a drain could break, two pods of a quorum on one
// node, clients that do not know every node, a single bot.
func haProblems(r rendered) []string {
	var p []string
	sets := map[string]*appsv1.StatefulSet{}
	for _, ss := range objectsOf[*appsv1.StatefulSet](r) {
		sets[ss.Name] = ss
	}
	services := map[string]*corev1.Service{}
	for _, s := range objectsOf[*corev1.Service](r) {
		services[s.Name] = s
	}
	conf := map[string]string{}
	for _, cm := range objectsOf[*corev1.ConfigMap](r) {
		for k, v := range cm.Data {
			conf[k] = v
		}
	}
	var bot *appsv1.Deployment
	for _, d := range objectsOf[*appsv1.Deployment](r) {
		if d.Name == "redfix-bot" {
			bot = d
		}
	}
	if bot == nil || replicas(bot.Spec.Replicas) < 2 {
		p = append(p, "fewer than two bots")
	}

	// NATS: three nodes with JetStream on volumes, routed to one another by
	// their stable names (the StatefulSet's headless service).
	nats := sets["nats"]
	if nats == nil {
		return append(p, "no StatefulSet nats")
	}
	if replicas(nats.Spec.Replicas) != 3 {
		p = append(p, fmt.Sprintf("nats runs %d nodes, want 3", replicas(nats.Spec.Replicas)))
	}
	if len(nats.Spec.VolumeClaimTemplates) == 0 {
		p = append(p, "nats has no volume for JetStream")
	}
	if svc := services[nats.Spec.ServiceName]; svc == nil || svc.Spec.ClusterIP != "None" {
		p = append(p, fmt.Sprintf("nats's service %q is not headless: its pods have no stable names", nats.Spec.ServiceName))
	}
	nc := conf["nats.conf"]
	for i := range int(replicas(nats.Spec.Replicas)) {
		route := fmt.Sprintf("nats-%d.%s:6222", i, nats.Spec.ServiceName)
		if !strings.Contains(nc, route) {
			p = append(p, "nats.conf has no route to "+route)
		}
	}
	if !strings.Contains(nc, "server_name: $POD_NAME") || !envFromField(nats.Spec.Template.Spec.Containers[0], "POD_NAME", "metadata.name") {
		p = append(p, "nats nodes have no name of their own (server_name from the pod's name)")
	}

	// Redis: a primary and replicas, and three Sentinels with a majority
	// quorum.
	if rs := sets["redis"]; rs == nil || replicas(rs.Spec.Replicas) < 2 {
		p = append(p, "redis has no replica")
	}
	sentinels := sets["redis-sentinel"]
	if sentinels == nil || replicas(sentinels.Spec.Replicas) != 3 {
		p = append(p, "want three Sentinels")
	} else if !strings.Contains(conf["sentinel.conf"], "sentinel monitor redfix redis-0.redis-headless 6379 2\n") {
		p = append(p, "sentinel.conf does not monitor redis-0 with a quorum of 2")
	}

	// Every quorum keeps a majority through a drain, and no two of its
	// pods share a node.
	pdbs := map[string]*policyv1.PodDisruptionBudget{}
	for _, b := range objectsOf[*policyv1.PodDisruptionBudget](r) {
		pdbs[b.Spec.Selector.MatchLabels["app"]] = b
	}
	for _, name := range []string{"nats", "redis", "redis-sentinel"} {
		ss := sets[name]
		if ss == nil {
			continue
		}
		n := replicas(ss.Spec.Replicas)
		b := pdbs[name]
		if b == nil || b.Spec.MinAvailable == nil || b.Spec.MinAvailable.IntVal != n/2+1 {
			p = append(p, fmt.Sprintf("%s: want a PodDisruptionBudget keeping a majority (%d of %d)", name, n/2+1, n))
		}
		if !apartOnNodes(ss.Spec.Template.Spec, name) {
			p = append(p, name+": pods may share a node (no required anti-affinity on kubernetes.io/hostname)")
		}
	}
	if bot != nil && !apartOnNodes(bot.Spec.Template.Spec, "redfix-bot") {
		p = append(p, "redfix-bot: pods may share a node")
	}

	// The bot and the workers know every node, keep as many copies as
	// there are NATS nodes, and load a valid configuration.
	clients := []corev1.Container{}
	if bot != nil {
		clients = append(clients, bot.Spec.Template.Spec.Containers[0])
	}
	if w := sets["redfix-worker"]; w != nil {
		clients = append(clients, w.Spec.Template.Spec.Containers[0])
	}
	for _, c := range clients {
		cfg, err := loadPodConfig(c, conf["redfix.yaml"])
		if err != nil {
			p = append(p, fmt.Sprintf("container %s: %v", c.Name, err))
			continue
		}
		if cfg.NATS.Replicas != int(replicas(nats.Spec.Replicas)) || strings.Count(cfg.NATS.URL, ",") != int(replicas(nats.Spec.Replicas))-1 {
			p = append(p, fmt.Sprintf("container %s: nats %q with %d replicas, want every node and as many copies", c.Name, cfg.NATS.URL, cfg.NATS.Replicas))
		}
		if sentinels != nil && (cfg.Redis.Sentinel.Master != "redfix" || len(cfg.Redis.Sentinel.Addrs) != int(replicas(sentinels.Spec.Replicas))) {
			p = append(p, fmt.Sprintf("container %s: redis %s, want every Sentinel", c.Name, cfg.Redis.Describe()))
		}
		if cfg.Redis.WaitReplicas < 1 {
			p = append(p, fmt.Sprintf("container %s: claims do not wait for a replica (redis.wait_replicas)", c.Name))
		}
	}
	return p
}

func envFromField(c corev1.Container, name, field string) bool {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == field {
			return true
		}
	}
	return false
}

func apartOnNodes(spec corev1.PodSpec, app string) bool {
	if spec.Affinity == nil || spec.Affinity.PodAntiAffinity == nil {
		return false
	}
	for _, term := range spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if term.TopologyKey == "kubernetes.io/hostname" && term.LabelSelector != nil && term.LabelSelector.MatchLabels["app"] == app {
			return true
		}
	}
	return false
}

// loadPodConfig loads redfix's configuration as the container would: the
// shipped file, then the container's plain environment variables (secrets
// stand in as "secret").
func loadPodConfig(c corev1.Container, file string) (config.Config, error) {
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil {
			env[e.Name] = "secret"
		}
	}
	dir, err := os.MkdirTemp("", "redfix-ha-")
	if err != nil {
		return config.Config{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "redfix.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		return config.Config{}, err
	}
	return config.Load(path, func(k string) string { return env[k] })
}

// The ha overlay survives the loss of one node of each kind.
func TestHAOverlayKeepsQuorums(t *testing.T) {
	r := shipped(t)["overlays/ha"]
	if p := haProblems(r); len(p) > 0 {
		t.Fatalf("overlays/ha:\n%s", strings.Join(p, "\n"))
	}
	// prod is the single-server form: the check sees what it lacks.
	if p := haProblems(shipped(t)["overlays/prod"]); len(p) == 0 {
		t.Fatal("the ha check finds nothing missing in the single-server prod overlay")
	}
}
