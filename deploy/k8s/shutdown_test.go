package k8s_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"strings"

	"github.com/redfix/redfix/pkg/config"
)

// closeMargin is what a process needs after its drain to close its
// connections, flush its logs and exit.
const closeMargin = 15 * time.Second

// shippedRedfixConfig is redfix.yaml as rendered in r, loaded by redfix's
// own configuration loader (defaults applied, validated).
func shippedRedfixConfig(t *testing.T, r rendered) config.Config {
	t.Helper()
	for _, cm := range objectsOf[*corev1.ConfigMap](r) {
		if v, ok := cm.Data["redfix.yaml"]; ok {
			path := filepath.Join(t.TempDir(), "redfix.yaml")
			if err := os.WriteFile(path, []byte(v), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path, func(string) string { return "" })
			if err != nil {
				t.Fatalf("redfix.yaml: %v", err)
			}
			return cfg
		}
	}
	t.Fatal("no config map holds redfix.yaml")
	return config.Config{}
}

// gracePeriodProblems checks that Kubernetes waits for the bot and the
// workers to drain before it kills them: each pod's
// terminationGracePeriodSeconds exceeds the drain its process does on
// SIGTERM (the workers' worker.shutdown_timeout, the bot's
// http.grace_period) with room to close.
func gracePeriodProblems(cfg config.Config, r rendered) []string {
	drain := map[string]struct {
		d       time.Duration
		setting string
	}{
		"redfix-worker": {cfg.Worker.ShutdownTimeout, "worker.shutdown_timeout"},
		"redfix-bot":    {cfg.HTTP.GracePeriod, "http.grace_period"},
	}
	var p []string
	for _, w := range workloads(r) {
		want, ok := drain[w.Name]
		if !ok {
			continue
		}
		if want.d <= 0 {
			p = append(p, fmt.Sprintf("%s: %s is %s: the drain is unbounded, no grace period covers it", w.Name, want.setting, want.d))
			continue
		}
		gp := w.Pod.Spec.TerminationGracePeriodSeconds
		if gp == nil {
			p = append(p, w.Name+": no terminationGracePeriodSeconds")
			continue
		}
		if grace := time.Duration(*gp) * time.Second; grace < want.d+closeMargin {
			p = append(p, fmt.Sprintf("%s: terminationGracePeriodSeconds %s is less than %s (%s) + %s to close", w.Name, grace, want.setting, want.d, closeMargin))
		}
	}
	return p
}

func TestGracePeriodsCoverTheDrain(t *testing.T) {
	for dir, r := range shipped(t) {
		cfg := shippedRedfixConfig(t, r)
		if cfg.Worker.ShutdownTimeout == 0 {
			t.Errorf("%s: redfix.yaml leaves the workers' drain unbounded (worker.shutdown_timeout)", dir)
		}
		for _, p := range gracePeriodProblems(cfg, r) {
			t.Errorf("%s: %s", dir, p)
		}
	}
}

func TestGracePeriodCheckCatchesShortGrace(t *testing.T) {
	cases := []struct{ name, file, old, new, want string }{
		{"worker drain longer than its grace", "base/redfix.yaml", "shutdown_timeout: 30s", "shutdown_timeout: 2m", "redfix-worker: terminationGracePeriodSeconds 1m0s is less than worker.shutdown_timeout"},
		{"unbounded worker drain", "base/redfix.yaml", "shutdown_timeout: 30s", "shutdown_timeout: 0s", "the drain is unbounded"},
		{"bot grace", "base/bot.yaml", "terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 30", "redfix-bot: terminationGracePeriodSeconds 30s is less than http.grace_period"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memCopy(t)
			breakFile(t, mem, filepath.Join("/k8s", c.file), c.old, c.new)
			r, err := load(mem, "/k8s/overlays/prod")
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(gracePeriodProblems(shippedRedfixConfig(t, r), r))
			if !strings.Contains(got, c.want) {
				t.Fatalf("problems %s, want one saying %q", got, c.want)
			}
			t.Log(got)
		})
	}
}
