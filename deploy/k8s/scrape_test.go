package k8s_test

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// monitoringNamespace is where Prometheus runs (the network policies name
// it).
const monitoringNamespace = "monitoring"

// metricsPorts are the ports the bot and the workers serve /metrics on,
// read from the configuration they run with (redfix.yaml): the bot's
// http.addr, the workers' worker.metrics_addr.
func metricsPorts(r rendered) (map[string]int32, error) {
	var conf string
	for _, cm := range objectsOf[*corev1.ConfigMap](r) {
		if v, ok := cm.Data["redfix.yaml"]; ok {
			conf = v
		}
	}
	var cfg struct {
		HTTP struct {
			Addr string `json:"addr"`
		} `json:"http"`
		Worker struct {
			MetricsAddr string `json:"metrics_addr"`
		} `json:"worker"`
	}
	if err := yaml.Unmarshal([]byte(conf), &cfg); err != nil {
		return nil, fmt.Errorf("redfix.yaml: %w", err)
	}
	out := map[string]int32{}
	for name, addr := range map[string]string{"redfix-bot": cfg.HTTP.Addr, "redfix-worker": cfg.Worker.MetricsAddr} {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("redfix.yaml: %s's address %q: %w", name, addr, err)
		}
		n, err := strconv.ParseInt(port, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("redfix.yaml: %s's address %q: %w", name, addr, err)
		}
		out[name] = int32(n)
	}
	return out, nil
}

// admitsFrom reports whether the network policies let pods of namespace ns
// reach port on pods with the labels podLabels. With no policy selecting
// the pods, everything may.
func admitsFrom(nps []*networkingv1.NetworkPolicy, podLabels map[string]string, ns string, port int32) bool {
	selected := false
	for _, np := range nps {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || !sel.Matches(labels.Set(podLabels)) {
			continue
		}
		ingress := false
		for _, t := range np.Spec.PolicyTypes {
			ingress = ingress || t == networkingv1.PolicyTypeIngress
		}
		if !ingress {
			continue
		}
		selected = true
		for _, rule := range np.Spec.Ingress {
			portOK := len(rule.Ports) == 0
			for _, p := range rule.Ports {
				portOK = portOK || (p.Port != nil && p.Port.IntVal == port)
			}
			fromOK := len(rule.From) == 0
			for _, f := range rule.From {
				if f.NamespaceSelector == nil || f.PodSelector != nil || f.IPBlock != nil {
					continue
				}
				nsSel, err := metav1.LabelSelectorAsSelector(f.NamespaceSelector)
				fromOK = fromOK || (err == nil && nsSel.Matches(labels.Set{"kubernetes.io/metadata.name": ns}))
			}
			if portOK && fromOK {
				return true
			}
		}
	}
	return !selected
}

// scrapeProblems checks that Prometheus can scrape the bot's and the
// workers' /metrics: their pods expose the port the configuration serves
// it on, the scrape annotations name it, every PodMonitor scrapes /metrics
// on it, and the network policies let the monitoring namespace reach it.
func scrapeProblems(r rendered) []string {
	want, err := metricsPorts(r)
	if err != nil {
		return []string{err.Error()}
	}
	nps := objectsOf[*networkingv1.NetworkPolicy](r)
	var p []string
	byName := map[string]workload{}
	for _, w := range workloads(r) {
		byName[w.Name] = w
	}
	// portName is the name of the container port serving /metrics.
	portName := map[string]string{}
	for name, port := range want {
		w, ok := byName[name]
		if !ok {
			p = append(p, "no workload "+name)
			continue
		}
		for _, c := range w.Pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.ContainerPort == port {
					portName[name] = cp.Name
				}
			}
		}
		if portName[name] == "" {
			p = append(p, fmt.Sprintf("%s: no container port %d, where redfix.yaml serves /metrics", name, port))
		}
		a := w.Pod.Annotations
		if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != strconv.Itoa(int(port)) {
			p = append(p, fmt.Sprintf("%s: scrape annotations %q on port %q, want \"true\" on %d", name, a["prometheus.io/scrape"], a["prometheus.io/port"], port))
		}
		if path, ok := a["prometheus.io/path"]; ok && path != "/metrics" {
			p = append(p, fmt.Sprintf("%s: prometheus.io/path %q, want /metrics", name, path))
		}
		if !admitsFrom(nps, w.Pod.Labels, monitoringNamespace, port) {
			p = append(p, fmt.Sprintf("%s: the network policies keep namespace %s from port %d", name, monitoringNamespace, port))
		}
	}
	for _, pm := range objectsOf[*monitoringv1.PodMonitor](r) {
		sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
		if err != nil {
			p = append(p, fmt.Sprintf("PodMonitor %s: selector: %v", pm.Name, err))
			continue
		}
		var targets []string
		for _, w := range workloads(r) {
			if sel.Matches(labels.Set(w.Pod.Labels)) {
				targets = append(targets, w.Name)
			}
		}
		if len(targets) != 1 || want[targets[0]] == 0 {
			p = append(p, fmt.Sprintf("PodMonitor %s selects %v, want the bot or the workers", pm.Name, targets))
			continue
		}
		if len(pm.Spec.PodMetricsEndpoints) == 0 {
			p = append(p, fmt.Sprintf("PodMonitor %s has no endpoints", pm.Name))
		}
		for _, e := range pm.Spec.PodMetricsEndpoints {
			var port string
			if e.Port != nil {
				port = *e.Port
			}
			if port != portName[targets[0]] {
				p = append(p, fmt.Sprintf("PodMonitor %s scrapes port %q of %s, which serves /metrics on port %q", pm.Name, port, targets[0], portName[targets[0]]))
			}
			if e.Path != "" && e.Path != "/metrics" {
				p = append(p, fmt.Sprintf("PodMonitor %s scrapes path %q, want /metrics", pm.Name, e.Path))
			}
		}
	}
	return p
}

// withComponent renders overlay with component added, in memory.
func withComponent(t *testing.T, fsys filesys.FileSystem, overlay, component string) rendered {
	t.Helper()
	dir := filepath.Join("/k8s", "with-"+filepath.Base(component), filepath.Base(overlay))
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../" + overlay + "\ncomponents:\n  - ../../" + component + "\n"
	if err := fsys.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k)); err != nil {
		t.Fatal(err)
	}
	r, err := load(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPrometheusCanScrapeBotAndWorkers(t *testing.T) {
	for dir, r := range shipped(t) {
		for _, p := range scrapeProblems(r) {
			t.Errorf("%s: %s", dir, p)
		}
	}
	for _, overlay := range []string{"overlays/dev", "overlays/prod"} {
		r := withComponent(t, memCopy(t), overlay, "components/monitoring")
		if n := len(objectsOf[*monitoringv1.PodMonitor](r)); n != 2 {
			t.Fatalf("%s with components/monitoring: %d PodMonitors, want the bot's and the workers'", overlay, n)
		}
		for _, p := range scrapeProblems(r) {
			t.Errorf("%s with components/monitoring: %s", overlay, p)
		}
		for _, p := range namespaceProblems(r) {
			t.Errorf("%s with components/monitoring: %s", overlay, p)
		}
	}
}

// The check catches a wrong annotation, a PodMonitor on the wrong port or
// path, a metrics address the pod does not expose, and a network policy
// that keeps Prometheus out.
func TestScrapeCheckCatchesMistakes(t *testing.T) {
	cases := []struct{ name, file, old, new, want string }{
		{"annotation port", "base/worker.yaml", `prometheus.io/port: "9090"`, `prometheus.io/port: "9091"`, `redfix-worker: scrape annotations`},
		{"pod monitor port", "components/monitoring/podmonitor.yaml", "    - port: metrics\n", "    - port: metric\n", `PodMonitor redfix-worker scrapes port`},
		{"pod monitor path", "components/monitoring/podmonitor.yaml", "    - port: http\n      path: /metrics\n", "    - port: http\n      path: /stats\n", `scrapes path "/stats"`},
		{"metrics address", "base/redfix.yaml", "metrics_addr: 0.0.0.0:9090", "metrics_addr: 0.0.0.0:9100", "redfix-worker: no container port 9100"},
		{"network policy", "base/networkpolicy.yaml", "            matchLabels: {kubernetes.io/metadata.name: monitoring}\n      ports:\n        - {protocol: TCP, port: 9090}\n",
			"            matchLabels: {kubernetes.io/metadata.name: prometheus}\n      ports:\n        - {protocol: TCP, port: 9090}\n", "keep namespace monitoring from port 9090"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memCopy(t)
			breakFile(t, mem, filepath.Join("/k8s", c.file), c.old, c.new)
			got := strings.Join(scrapeProblems(withComponent(t, mem, "overlays/prod", "components/monitoring")), "\n")
			if !strings.Contains(got, c.want) {
				t.Fatalf("problems %q, want one saying %q", got, c.want)
			}
			t.Log(got)
		})
	}
}
