package k8s_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// workload is a Deployment or StatefulSet: its pod template and replicas.
type workload struct {
	Kind, Name string
	Replicas   int32
	Selector   *metav1.LabelSelector
	Pod        corev1.PodTemplateSpec
	// claimTemplates names a StatefulSet's volume claim templates.
	claimTemplates []string
}

func workloads(r rendered) []workload {
	var out []workload
	for _, o := range r.Objects {
		switch v := o.Obj.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{Kind: "Deployment", Name: v.Name, Replicas: replicas(v.Spec.Replicas), Selector: v.Spec.Selector, Pod: v.Spec.Template})
		case *appsv1.StatefulSet:
			w := workload{Kind: "StatefulSet", Name: v.Name, Replicas: replicas(v.Spec.Replicas), Selector: v.Spec.Selector, Pod: v.Spec.Template}
			for _, c := range v.Spec.VolumeClaimTemplates {
				w.claimTemplates = append(w.claimTemplates, c.Name)
			}
			out = append(out, w)
		}
	}
	return out
}

func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func objectsOf[T any](r rendered) []T {
	var out []T
	for _, o := range r.Objects {
		if v, ok := o.Obj.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// containerProblems lists what a platform team's admission policy would
// refuse in one container.
func containerProblems(pod corev1.PodSpec, c corev1.Container) []string {
	var p []string
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[res]; !ok {
			p = append(p, "no "+string(res)+" request")
		}
		if _, ok := c.Resources.Limits[res]; !ok {
			p = append(p, "no "+string(res)+" limit")
		}
	}
	sc := c.SecurityContext
	if sc == nil {
		return append(p, "no securityContext")
	}
	nonRoot := sc.RunAsNonRoot != nil && *sc.RunAsNonRoot
	if pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot && sc.RunAsNonRoot == nil {
		nonRoot = true
	}
	if !nonRoot {
		p = append(p, "may run as root (runAsNonRoot)")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		p = append(p, "writable root file system")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		p = append(p, "allowPrivilegeEscalation not false")
	}
	if sc.Privileged != nil && *sc.Privileged {
		p = append(p, "privileged")
	}
	dropsAll := false
	if sc.Capabilities != nil {
		for _, d := range sc.Capabilities.Drop {
			dropsAll = dropsAll || d == "ALL"
		}
		if len(sc.Capabilities.Add) > 0 {
			p = append(p, fmt.Sprintf("adds capabilities %v", sc.Capabilities.Add))
		}
	}
	if !dropsAll {
		p = append(p, "does not drop ALL capabilities")
	}
	if c.ReadinessProbe == nil {
		p = append(p, "no readiness probe")
	}
	if c.LivenessProbe == nil {
		p = append(p, "no liveness probe")
	}
	// A probe on a named port must name one the container has.
	for _, pr := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
		if pr == nil {
			continue
		}
		var port string
		if pr.HTTPGet != nil {
			port = pr.HTTPGet.Port.StrVal
		}
		if pr.TCPSocket != nil {
			port = pr.TCPSocket.Port.StrVal
		}
		if port != "" && !hasPort(c, port) {
			p = append(p, "probe on unknown port "+port)
		}
	}
	return p
}

func hasPort(c corev1.Container, name string) bool {
	for _, cp := range c.Ports {
		if cp.Name == name {
			return true
		}
	}
	return false
}

func TestPolicyEveryContainer(t *testing.T) {
	for dir, r := range shipped(t) {
		ws := workloads(r)
		want := 4
		if dir == "overlays/ha" {
			want = 5 // and the Sentinels
		}
		if len(ws) != want {
			t.Fatalf("%s: %d workloads, want bot, worker, nats, redis (and redis-sentinel in ha)", dir, len(ws))
		}
		for _, w := range ws {
			spec := w.Pod.Spec
			if spec.TerminationGracePeriodSeconds == nil {
				t.Errorf("%s: %s %s: terminationGracePeriodSeconds not set", dir, w.Kind, w.Name)
			}
			if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
				t.Errorf("%s: %s %s: mounts a service account token it does not use", dir, w.Kind, w.Name)
			}
			sel, err := metav1.LabelSelectorAsSelector(w.Selector)
			if err != nil || !sel.Matches(labels.Set(w.Pod.Labels)) {
				t.Errorf("%s: %s %s: selector %v does not match its pods' labels %v (the API server refuses it)", dir, w.Kind, w.Name, w.Selector, w.Pod.Labels)
			}
			for _, c := range append(spec.InitContainers, spec.Containers...) {
				for _, p := range containerProblems(spec, c) {
					t.Errorf("%s: %s %s container %s: %s", dir, w.Kind, w.Name, c.Name, p)
				}
				if dir != "base" && (!strings.Contains(c.Image, ":") || strings.HasSuffix(c.Image, ":latest")) {
					t.Errorf("%s: %s %s container %s: image %q is not pinned to a tag", dir, w.Kind, w.Name, c.Name, c.Image)
				}
			}
		}
	}
}

// Redis and NATS keep their state on persistent volumes and require
// credentials from the secret; Redis writes an append-only file.
func TestPolicyStateSurvivesAndNeedsCredentials(t *testing.T) {
	for dir, r := range shipped(t) {
		for _, ss := range objectsOf[*appsv1.StatefulSet](r) {
			if ss.Name == "redfix-worker" {
				continue // its claim holds caches (TestWorkerCachesSurviveRestarts)
			}
			if len(ss.Spec.VolumeClaimTemplates) != 1 || ss.Spec.VolumeClaimTemplates[0].Name != "data" {
				t.Errorf("%s: StatefulSet %s: want one volume claim, data", dir, ss.Name)
			}
			mounted := false
			for _, m := range ss.Spec.Template.Spec.Containers[0].VolumeMounts {
				mounted = mounted || (m.Name == "data" && m.MountPath == "/data")
			}
			if !mounted {
				t.Errorf("%s: StatefulSet %s: the claim is not mounted at /data", dir, ss.Name)
			}
			secretKeys := map[string]bool{}
			for _, e := range ss.Spec.Template.Spec.Containers[0].Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					secretKeys[e.ValueFrom.SecretKeyRef.Key] = true
				}
			}
			want := map[string][]string{"redis": {"REDFIX_REDIS_PASSWORD"}, "nats": {"REDFIX_NATS_USER", "REDFIX_NATS_PASSWORD"}, "redis-sentinel": {"REDFIX_REDIS_PASSWORD"}}[ss.Name]
			if want == nil {
				t.Errorf("%s: unexpected StatefulSet %s", dir, ss.Name)
			}
			for _, k := range want {
				if !secretKeys[k] {
					t.Errorf("%s: StatefulSet %s does not read %s from the secret", dir, ss.Name, k)
				}
			}
		}
		conf := map[string]string{}
		for _, cm := range objectsOf[*corev1.ConfigMap](r) {
			for k, v := range cm.Data {
				conf[k] = v
			}
		}
		for file, lines := range map[string][]string{
			"redis.conf": {"appendonly yes", "dir /data", "maxmemory-policy noeviction"},
			"nats.conf":  {"store_dir: /data/jetstream", "password: $NATS_PASSWORD"},
		} {
			for _, l := range lines {
				if !strings.Contains(conf[file], l) {
					t.Errorf("%s: %s lacks %q", dir, file, l)
				}
			}
		}
	}
}

func TestPolicyNetwork(t *testing.T) {
	for dir, r := range shipped(t) {
		nps := objectsOf[*networkingv1.NetworkPolicy](r)
		deny := false
		for _, np := range nps {
			if len(np.Spec.PodSelector.MatchLabels) == 0 && len(np.Spec.PodSelector.MatchExpressions) == 0 &&
				len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0 && len(np.Spec.PolicyTypes) == 2 {
				deny = true
			}
		}
		if !deny {
			t.Errorf("%s: no default-deny NetworkPolicy", dir)
		}
		// Every workload is selected by a policy of its own, and the
		// workers' egress goes to DNS, NATS, Redis (and its Sentinels) and HTTPS only.
		for _, w := range workloads(r) {
			var own []*networkingv1.NetworkPolicy
			for _, np := range nps {
				if len(np.Spec.PodSelector.MatchLabels) == 0 {
					continue
				}
				sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
				if err == nil && sel.Matches(labels.Set(w.Pod.Labels)) {
					own = append(own, np)
				}
			}
			if len(own) == 0 {
				t.Errorf("%s: %s %s: no NetworkPolicy selects it", dir, w.Kind, w.Name)
			}
			if w.Name != "redfix-worker" {
				continue
			}
			allowed := map[int32]bool{53: true, 4222: true, 6379: true, 443: true, 26379: true}
			for _, np := range nps {
				sel, _ := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
				if !sel.Matches(labels.Set(w.Pod.Labels)) {
					continue
				}
				for _, e := range np.Spec.Egress {
					if len(e.Ports) == 0 {
						t.Errorf("%s: NetworkPolicy %s lets workers reach every port", dir, np.Name)
					}
					for _, p := range e.Ports {
						if p.Port == nil || !allowed[p.Port.IntVal] {
							t.Errorf("%s: NetworkPolicy %s lets workers reach port %v", dir, np.Name, p.Port)
						}
					}
				}
			}
		}
	}
}

// Prod has a disruption budget for every workload that runs more than one
// pod; no budget anywhere blocks every eviction; dev runs one of each and
// has none.
func TestPolicyDisruptionBudgets(t *testing.T) {
	all := shipped(t)
	for dir, r := range all {
		pdbs := objectsOf[*policyv1.PodDisruptionBudget](r)
		for _, w := range workloads(r) {
			var budget *policyv1.PodDisruptionBudget
			for _, pdb := range pdbs {
				sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
				if err == nil && sel.Matches(labels.Set(w.Pod.Labels)) {
					budget = pdb
				}
			}
			if dir == "overlays/dev" && w.Replicas != 1 {
				t.Errorf("dev: %s %s runs %d replicas, want 1", w.Kind, w.Name, w.Replicas)
			}
			if (dir == "overlays/prod" || dir == "overlays/ha") && w.Replicas > 1 && budget == nil {
				t.Errorf("prod: %s %s runs %d replicas and has no PodDisruptionBudget", w.Kind, w.Name, w.Replicas)
			}
			if budget == nil {
				continue
			}
			if mu := budget.Spec.MaxUnavailable; mu != nil && mu.IntVal < 1 && mu.StrVal == "" {
				t.Errorf("%s: PodDisruptionBudget %s allows no eviction at all", dir, budget.Name)
			}
			if ma := budget.Spec.MinAvailable; ma != nil && ma.StrVal == "" && ma.IntVal >= w.Replicas {
				t.Errorf("%s: PodDisruptionBudget %s wants %d of %d replicas: no eviction possible", dir, budget.Name, ma.IntVal, w.Replicas)
			}
		}
		if dir == "overlays/dev" && len(pdbs) > 0 {
			t.Errorf("dev: %d PodDisruptionBudgets, want none", len(pdbs))
		}
		if dir == "overlays/prod" && len(pdbs) == 0 {
			t.Error("prod: no PodDisruptionBudgets")
		}
	}
}

// Every secret and config map a pod names is rendered, except the secret
// prod expects to exist already (it is not kept in git).
func TestPolicyReferencesResolve(t *testing.T) {
	for dir, r := range shipped(t) {
		have := map[string]bool{}
		for _, o := range r.Objects {
			have[o.Kind+"/"+o.Name] = true
		}
		for _, w := range workloads(r) {
			refs := map[string]bool{}
			for _, v := range w.Pod.Spec.Volumes {
				if v.ConfigMap != nil {
					refs["ConfigMap/"+v.ConfigMap.Name] = true
				}
			}
			for _, c := range w.Pod.Spec.Containers {
				for _, e := range c.EnvFrom {
					if e.SecretRef != nil {
						refs["Secret/"+e.SecretRef.Name] = true
					}
				}
				for _, e := range c.Env {
					if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
						refs["Secret/"+e.ValueFrom.SecretKeyRef.Name] = true
					}
				}
			}
			for ref := range refs {
				external := ref == "Secret/redfix-secrets" && dir != "overlays/dev"
				if !have[ref] && !external {
					t.Errorf("%s: %s %s names %s, which is not rendered", dir, w.Kind, w.Name, ref)
				}
			}
		}
		if dir == "overlays/prod" && len(objectsOf[*corev1.Secret](r)) > 0 {
			t.Error("prod renders a Secret: credentials would be kept in git")
		}
	}
}
