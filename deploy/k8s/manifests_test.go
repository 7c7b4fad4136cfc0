// Package k8s_test renders the kustomize base and overlays in process (the
// same kustomize library `kubectl kustomize` uses, so no binary and no
// cluster are needed) and decodes every object strictly into the official
// Kubernetes API types: a field the API does not have is an error naming it,
// as the API server's strict field validation would report it.
package k8s_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The kustomizations shipped; each must render and decode.
var kustomizations = []string{"base", "overlays/dev", "overlays/prod", "overlays/ha"}

// object is one rendered object, decoded into its API type.
type object struct {
	Kind, Name, Namespace string
	Obj                   any
}

// rendered is what a kustomization renders to, decoded.
type rendered struct {
	Dir     string
	Objects []object
}

// render runs kustomize on dir of fsys.
func render(fsys filesys.FileSystem, dir string) ([][]byte, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	var out [][]byte
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("kustomize %s: %s %s as YAML: %w", dir, r.GetKind(), r.GetName(), err)
		}
		out = append(out, y)
	}
	return out, nil
}

// decodeStrict decodes one object into the Go type of its apiVersion and
// kind, refusing unknown and duplicate fields.
func decodeStrict(doc []byte) (object, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return object{}, fmt.Errorf("read apiVersion and kind: %w", err)
	}
	var target any
	switch head.APIVersion + " " + head.Kind {
	case "v1 Namespace":
		target = &corev1.Namespace{}
	case "v1 ConfigMap":
		target = &corev1.ConfigMap{}
	case "v1 Secret":
		target = &corev1.Secret{}
	case "v1 Service":
		target = &corev1.Service{}
	case "apps/v1 Deployment":
		target = &appsv1.Deployment{}
	case "apps/v1 StatefulSet":
		target = &appsv1.StatefulSet{}
	case "networking.k8s.io/v1 NetworkPolicy":
		target = &networkingv1.NetworkPolicy{}
	case "policy/v1 PodDisruptionBudget":
		target = &policyv1.PodDisruptionBudget{}
	case "keda.sh/v1alpha1 ScaledObject":
		target = &scaledObject{}
	case "monitoring.coreos.com/v1 PodMonitor":
		target = &monitoringv1.PodMonitor{}
	default:
		return object{}, fmt.Errorf("%s %s: no Go type for apiVersion %q kind %q in this test", head.Kind, head.Metadata.Name, head.APIVersion, head.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, target); err != nil {
		return object{}, fmt.Errorf("%s %s: %w", head.Kind, head.Metadata.Name, err)
	}
	if so, ok := target.(*scaledObject); ok {
		if err := so.checkTriggers(); err != nil {
			return object{}, err
		}
	}
	return object{Kind: head.Kind, Name: head.Metadata.Name, Namespace: head.Metadata.Namespace, Obj: target}, nil
}

// load renders dir of fsys and decodes every object strictly.
func load(fsys filesys.FileSystem, dir string) (rendered, error) {
	docs, err := render(fsys, dir)
	if err != nil {
		return rendered{}, err
	}
	r := rendered{Dir: dir}
	for _, d := range docs {
		o, err := decodeStrict(d)
		if err != nil {
			return rendered{}, fmt.Errorf("%s: %w", dir, err)
		}
		r.Objects = append(r.Objects, o)
	}
	return r, nil
}

// shipped renders each shipped kustomization from disk.
func shipped(t *testing.T) map[string]rendered {
	t.Helper()
	out := map[string]rendered{}
	for _, k := range kustomizations {
		r, err := load(filesys.MakeFsOnDisk(), k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = r
	}
	return out
}

func TestShippedManifestsDecodeStrictly(t *testing.T) {
	for dir, r := range shipped(t) {
		kinds := map[string]int{}
		for _, o := range r.Objects {
			kinds[o.Kind]++
		}
		t.Logf("%s: %d objects %v", dir, len(r.Objects), kinds)
		for _, want := range []string{"Namespace", "Deployment", "StatefulSet", "Service", "ConfigMap", "NetworkPolicy"} {
			if kinds[want] == 0 {
				t.Errorf("%s renders no %s", dir, want)
			}
		}
	}
}

// memCopy copies the deploy/k8s tree into an in-memory file system, so a
// test can break one file without touching the checkout.
func memCopy(t *testing.T) filesys.FileSystem {
	t.Helper()
	mem := filesys.MakeFsInMemory()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return mem.WriteFile(filepath.Join("/k8s", path), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

// A misspelled field anywhere — in the base, in an overlay's patch, in the
// KEDA component — fails the decode with an error that names the field.
func TestMisspelledFieldIsAnError(t *testing.T) {
	cases := []struct {
		name, file, old, new, dir, field string
	}{
		{"deployment spec", "base/bot.yaml", "  replicas: 2\n", "  replcas: 2\n", "base", "replcas"},
		{"container", "base/worker.yaml", "          image: redfix-worker\n", "          image: redfix-worker\n          imagePullPolcy: Always\n", "overlays/prod", "imagePullPolcy"},
		{"security context", "base/redis.yaml", "            readOnlyRootFilesystem: true\n", "            readOnlyRootFilesytem: true\n", "overlays/dev", "readOnlyRootFilesytem"},
		{"probe", "base/nats.yaml", "            periodSeconds: 30\n", "            periodSecond: 30\n", "base", "periodSecond"},
		{"network policy", "base/networkpolicy.yaml", "  podSelector: {}\n  policyTypes: [Ingress, Egress]\n", "  podSelector: {}\n  policyType: [Ingress, Egress]\n", "base", "policyType"},
		{"overlay patch", "overlays/prod/resources.yaml", "            requests: {cpu: \"2\", memory: 4Gi}\n", "            request: {cpu: \"2\", memory: 4Gi}\n", "overlays/prod", "request"},
		{"disruption budget", "overlays/prod/pdb.yaml", "  maxUnavailable: 1\n", "  maxUnavailabel: 1\n", "overlays/prod", "maxUnavailabel"},
		{"KEDA scaled object", "components/autoscale/scaledobject.yaml", "  minReplicaCount: 1\n", "  minReplicaCont: 1\n", "overlays/prod", "minReplicaCont"},
		{"KEDA trigger metadata", "components/autoscale/scaledobject.yaml", "        lagThreshold:", "        lagTreshold:", "overlays/prod", "lagTreshold"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memCopy(t)
			path := filepath.Join("/k8s", c.file)
			b, err := mem.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Count(string(b), c.old) != 1 {
				t.Fatalf("%s holds %q %d times, want once: update the case", c.file, c.old, strings.Count(string(b), c.old))
			}
			// The copy renders and decodes before it is broken.
			if _, err := load(mem, filepath.Join("/k8s", c.dir)); err != nil {
				t.Fatalf("unbroken copy: %v", err)
			}
			if err := mem.WriteFile(path, []byte(strings.Replace(string(b), c.old, c.new, 1))); err != nil {
				t.Fatal(err)
			}
			_, err = load(mem, filepath.Join("/k8s", c.dir))
			if err == nil {
				t.Fatalf("%s with %q rendered and decoded without error", c.file, c.field)
			}
			if !strings.Contains(err.Error(), `"`+c.field+`"`) {
				t.Fatalf("the error does not name the field %q: %v", c.field, err)
			}
			t.Logf("%v", err)
		})
	}
}
