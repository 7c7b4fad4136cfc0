package k8s_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/config"
)

// home is the workers' home directory: the image's user (Dockerfile,
// useradd --create-home). Go's module cache defaults to $HOME/go/pkg/mod.
const home = "/home/redfix"

// workerCacheDirs are the directories where a worker keeps what is costly
// to rebuild, by what they hold, as the configuration places them.
func workerCacheDirs(cfg config.Config) map[string]string {
	dirs := map[string]string{
		"data directory (data_dir)":          cfg.DataDir,
		"mirrors (checkouts.mirror_dir)":     cfg.Checkouts.MirrorDir,
		"build caches (sandbox.cache_dir)":   cfg.Sandbox.CacheDir,
		"Go module cache ($HOME/go/pkg/mod)": filepath.Join(home, "go", "pkg", "mod"),
	}
	if dirs["mirrors (checkouts.mirror_dir)"] == "" {
		dirs["mirrors (checkouts.mirror_dir)"] = filepath.Join(cfg.DataDir, "mirrors")
	}
	if dirs["build caches (sandbox.cache_dir)"] == "" {
		dirs["build caches (sandbox.cache_dir)"] = filepath.Join(cfg.DataDir, "cache")
	}
	return dirs
}

// cacheProblems lists the worker's cache directories that are not on a
// volume surviving a restart of its pod: each must be under a mount of a
// persistent volume claim (a StatefulSet's claim template, or a claim named
// in the pod), not an emptyDir (lost with the pod) nor the image's file
// system (read-only).
func cacheProblems(cfg config.Config, r rendered) []string {
	var w *workload
	for _, x := range workloads(r) {
		if x.Name == "redfix-worker" {
			w = &x
		}
	}
	if w == nil {
		return []string{"no redfix-worker"}
	}
	claims := map[string]bool{}
	for _, name := range w.claimTemplates {
		claims[name] = true
	}
	for _, v := range w.Pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims[v.Name] = true
		}
	}
	var mounts map[string]string // mount path → volume
	for _, ctr := range w.Pod.Spec.Containers {
		if ctr.Name == "worker" {
			mounts = map[string]string{}
			for _, m := range ctr.VolumeMounts {
				mounts[filepath.Clean(m.MountPath)] = m.Name
			}
		}
	}
	if mounts == nil {
		return []string{"redfix-worker has no container named worker"}
	}
	var p []string
	for what, dir := range workerCacheDirs(cfg) {
		// The deepest mount holding dir is where it is written.
		var at, vol string
		for mp, name := range mounts {
			if (dir == mp || strings.HasPrefix(dir, mp+"/")) && len(mp) > len(at) {
				at, vol = mp, name
			}
		}
		switch {
		case vol == "":
			p = append(p, fmt.Sprintf("%s %s is on no volume (the read-only image)", what, dir))
		case !claims[vol]:
			p = append(p, fmt.Sprintf("%s %s is on volume %s (mounted at %s), which does not survive a restart", what, dir, vol, at))
		}
	}
	return p
}

func TestWorkerCachesSurviveRestarts(t *testing.T) {
	for dir, r := range shipped(t) {
		cfg := shippedRedfixConfig(t, r)
		for _, p := range cacheProblems(cfg, r) {
			t.Errorf("%s: %s", dir, p)
		}
	}
}

// The check catches a cache put back on an emptyDir, and one moved off the
// claim by the configuration.
func TestCacheCheckCatchesLostCaches(t *testing.T) {
	cases := []struct{ name, file, old, new, want, dir string }{
		{"data on an emptyDir", "base/worker.yaml", "            - {name: tmp, mountPath: /tmp}\n",
			"            - {name: tmp, mountPath: /tmp}\n            - {name: scratch, mountPath: /home/redfix/data}\n",
			"data directory (data_dir) /home/redfix/data is on volume scratch", "overlays/prod"},
		{"mirrors in /tmp", "base/redfix.yaml", "  max_mirror_bytes: 10737418240\n", "  max_mirror_bytes: 10737418240\n  mirror_dir: /tmp/mirrors\n",
			"mirrors (checkouts.mirror_dir) /tmp/mirrors is on volume tmp", "overlays/dev"},
		{"no claim", "base/worker.yaml", "        name: cache\n", "        name: cached\n", "Go module cache ($HOME/go/pkg/mod) /home/redfix/go/pkg/mod is on volume cache", "base"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memCopy(t)
			breakFile(t, mem, filepath.Join("/k8s", c.file), c.old, c.new)
			if c.name == "data on an emptyDir" {
				breakFile(t, mem, "/k8s/base/worker.yaml", "        - name: tmp\n          emptyDir: {sizeLimit: 4Gi}\n",
					"        - name: tmp\n          emptyDir: {sizeLimit: 4Gi}\n        - name: scratch\n          emptyDir: {}\n")
			}
			r, err := load(mem, filepath.Join("/k8s", c.dir))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(cacheProblems(shippedRedfixConfig(t, r), r), "\n")
			if !strings.Contains(got, c.want) {
				t.Fatalf("problems %q, want one saying %q", got, c.want)
			}
			t.Log(got)
		})
	}
}

// dataDirMountProblems lists the bot's and workers' pods that mount a
// volume at the data directory itself: a mount point belongs to root (or
// the pod's fsGroup, open to the group), and redfix refuses a data
// directory that is not its user's own and private (config.PrepareDataDir).
// The data directory must be one redfix makes inside a volume.
func dataDirMountProblems(cfg config.Config, r rendered) []string {
	var p []string
	for _, w := range workloads(r) {
		if w.Name != "redfix-bot" && w.Name != "redfix-worker" {
			continue
		}
		for _, c := range w.Pod.Spec.Containers {
			for _, m := range c.VolumeMounts {
				if filepath.Clean(m.MountPath) == filepath.Clean(cfg.DataDir) {
					p = append(p, fmt.Sprintf("%s: volume %s is mounted at the data directory %s itself", w.Name, m.Name, cfg.DataDir))
				}
			}
		}
	}
	return p
}

func TestDataDirIsMadeByRedfixNotMounted(t *testing.T) {
	for dir, r := range shipped(t) {
		for _, p := range dataDirMountProblems(shippedRedfixConfig(t, r), r) {
			t.Errorf("%s: %s", dir, p)
		}
	}
	mem := memCopy(t)
	breakFile(t, mem, "/k8s/base/bot.yaml", "            - {name: home, mountPath: /home/redfix}\n",
		"            - {name: home, mountPath: /home/redfix}\n            - {name: tmp, mountPath: /home/redfix/data}\n")
	r, err := load(mem, "/k8s/base")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(dataDirMountProblems(shippedRedfixConfig(t, r), r), "\n")
	if !strings.Contains(got, "redfix-bot: volume tmp is mounted at the data directory /home/redfix/data itself") {
		t.Fatalf("problems %q, want the bot's mount at the data directory", got)
	}
}
