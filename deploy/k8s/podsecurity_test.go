package k8s_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Pod Security levels from the loosest to the strictest.
var psLevels = []psaapi.Level{psaapi.LevelPrivileged, psaapi.LevelBaseline, psaapi.LevelRestricted}

// psEvaluator is Kubernetes's own Pod Security admission checks, the ones
// the API server runs.
func psEvaluator(t *testing.T) psapolicy.Evaluator {
	t.Helper()
	ev, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// refusals evaluates every workload's pods at lv: what each refused pod
// breaks, by workload.
func refusals(ev psapolicy.Evaluator, lv psaapi.LevelVersion, r rendered) map[string]string {
	out := map[string]string{}
	for _, w := range workloads(r) {
		agg := psapolicy.AggregateCheckResults(ev.EvaluatePod(lv, &w.Pod.ObjectMeta, &w.Pod.Spec))
		if !agg.Allowed {
			out[w.Kind+" "+w.Name] = agg.ForbiddenReason() + ": " + agg.ForbiddenDetail()
		}
	}
	return out
}

// podSecurityProblems checks the Pod Security labels of redfix's
// namespace against the pods r runs: the labels are there and valid, the
// enforced level admits every pod, and it is the strictest that does (a
// namespace left looser than its pods need would admit what nobody meant
// to run there).
func podSecurityProblems(ev psapolicy.Evaluator, r rendered) []string {
	var ns *corev1.Namespace
	for _, n := range objectsOf[*corev1.Namespace](r) {
		if n.Name == namespace {
			ns = n
		}
	}
	if ns == nil {
		return []string{"no Namespace " + namespace}
	}
	var p []string
	for _, l := range []string{psaapi.EnforceLevelLabel, psaapi.EnforceVersionLabel, psaapi.AuditLevelLabel, psaapi.WarnLevelLabel} {
		if _, ok := ns.Labels[l]; !ok {
			p = append(p, "the namespace has no label "+l)
		}
	}
	// Where a label is missing, the API server's defaults apply.
	unset := psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()}
	pol, errs := psaapi.PolicyToEvaluate(ns.Labels, psaapi.Policy{Enforce: unset, Audit: unset, Warn: unset})
	if len(errs) > 0 {
		return append(p, "Pod Security labels: "+errs.ToAggregate().Error())
	}
	for w, why := range refusals(ev, pol.Enforce, r) {
		p = append(p, fmt.Sprintf("enforce %s refuses %s (%s)", pol.Enforce, w, why))
	}
	for i, l := range psLevels[:len(psLevels)-1] {
		if l != pol.Enforce.Level {
			continue
		}
		stricter := psaapi.LevelVersion{Level: psLevels[i+1], Version: pol.Enforce.Version}
		if len(refusals(ev, stricter, r)) == 0 {
			p = append(p, fmt.Sprintf("enforce %s is looser than the pods need: every pod meets %s", pol.Enforce, stricter))
		}
	}
	return p
}

func TestPodSecurityLabelsMatchThePods(t *testing.T) {
	ev := psEvaluator(t)
	for dir, r := range shipped(t) {
		for _, p := range podSecurityProblems(ev, r) {
			t.Errorf("%s: %s", dir, p)
		}
		// Why "privileged": the sandboxed pods, and only they, break
		// baseline, through their seccomp and AppArmor profiles.
		latest := psaapi.LatestVersion()
		baseline := refusals(ev, psaapi.LevelVersion{Level: psaapi.LevelBaseline, Version: latest}, r)
		for _, w := range []string{"Deployment redfix-bot", "StatefulSet redfix-worker"} {
			why, refused := baseline[w]
			if !refused || !strings.Contains(why, "seccompProfile") || !strings.Contains(why, "AppArmor") {
				t.Errorf("%s: baseline on %s: refused %v (%s); want refused for its Unconfined seccomp and AppArmor profiles", dir, w, refused, why)
			}
			t.Logf("%s: baseline refuses %s: %s", dir, w, why)
		}
		restricted := refusals(ev, psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: latest}, r)
		for _, w := range []string{"StatefulSet nats", "StatefulSet redis"} {
			if why, refused := restricted[w]; refused {
				t.Errorf("%s: %s does not meet restricted: %s", dir, w, why)
			}
		}
		if len(baseline) != 2 {
			t.Errorf("%s: baseline refuses %v; want the bot and the worker only", dir, baseline)
		}
	}
}

// The check catches a namespace that enforces less than the pods need, one
// that enforces more than they need, and missing labels.
func TestPodSecurityCheckCatchesMismatches(t *testing.T) {
	ev := psEvaluator(t)
	cases := []struct{ name, old, new, want string }{
		{"enforce baseline", "enforce: privileged\n", "enforce: baseline\n", "refuses StatefulSet redfix-worker"},
		{"no enforce label", "    pod-security.kubernetes.io/enforce: privileged\n", "", "no label pod-security.kubernetes.io/enforce"},
		{"misspelled level", "enforce: privileged\n", "enforce: priviledged\n", "Pod Security labels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memCopy(t)
			breakFile(t, mem, "/k8s/base/namespace.yaml", c.old, c.new)
			r, err := load(mem, "/k8s/base")
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(podSecurityProblems(ev, r), "\n")
			if !strings.Contains(got, c.want) {
				t.Fatalf("problems %q, want one saying %q", got, c.want)
			}
			t.Log(got)
		})
	}
	// Pods that no longer need privileged (profiles back to the runtime's
	// defaults): the namespace's privileged is then looser than needed.
	t.Run("looser than needed", func(t *testing.T) {
		mem := memCopy(t)
		for _, f := range []string{"/k8s/base/bot.yaml", "/k8s/base/worker.yaml"} {
			breakFile(t, mem, f, "            procMount: Unmasked\n            seccompProfile: {type: Unconfined}\n            appArmorProfile: {type: Unconfined}\n",
				"            seccompProfile: {type: RuntimeDefault}\n")
		}
		r, err := load(mem, "/k8s/base")
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(podSecurityProblems(ev, r), "\n")
		if !strings.Contains(got, "looser than the pods need") {
			t.Fatalf("problems %q, want the namespace found looser than its pods need", got)
		}
	})
}

// breakFile replaces old, which must be in path exactly once, with new.
func breakFile(t *testing.T, fsys filesys.FileSystem, path, old, new string) {
	t.Helper()
	b, err := fsys.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), old); n != 1 {
		t.Fatalf("%s holds %q %d times, want once: update the case", path, old, n)
	}
	if err := fsys.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1))); err != nil {
		t.Fatal(err)
	}
}
