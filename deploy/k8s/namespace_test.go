package k8s_test

import (
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// namespace is the one namespace redfix runs in: the base's Namespace, the
// namespace every object of every kustomization is put in, the one the KEDA
// trigger's NATS address names.
const namespace = "redfix"

// clusterScoped are the kinds that belong to no namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"CustomResourceDefinition": true, "PriorityClass": true, "StorageClass": true,
	"PersistentVolume": true, "RuntimeClass": true, "IngressClass": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"APIService": true, "ClusterTriggerAuthentication": true,
}

// namespaceProblems lists the namespaced objects of r that are not in
// redfix's namespace. Such an object lands in whatever namespace kubectl
// is pointed at: a disruption budget that guards nothing, a ScaledObject
// whose target is not found (workers never scale), a Secret no pod sees.
func namespaceProblems(r rendered) []string {
	var p []string
	for _, o := range r.Objects {
		switch {
		case clusterScoped[o.Kind] && o.Namespace != "":
			p = append(p, o.Kind+" "+o.Name+" is cluster-scoped but names namespace "+o.Namespace)
		case !clusterScoped[o.Kind] && o.Namespace == "":
			p = append(p, o.Kind+" "+o.Name+" has no namespace: it would land in the current one")
		case !clusterScoped[o.Kind] && o.Namespace != namespace:
			p = append(p, o.Kind+" "+o.Name+" is in namespace "+o.Namespace+", not "+namespace)
		}
	}
	return p
}

// componentOnly renders a component by itself, through a kustomization
// that sets nothing else: what the component brings must carry its own
// namespace, whatever overlay uses it.
func componentOnly(t *testing.T, fsys filesys.FileSystem, component string) rendered {
	t.Helper()
	dir := filepath.Join("/k8s", "component-only", filepath.Base(component))
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ncomponents:\n  - ../../" + component + "\n"
	if err := fsys.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k)); err != nil {
		t.Fatal(err)
	}
	r, err := load(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Objects) == 0 {
		t.Fatalf("component %s renders nothing", component)
	}
	return r
}

// Every namespaced object of the base, of each overlay and of each
// component is in redfix's namespace, and the base has that Namespace.
func TestEveryObjectInRedfixNamespace(t *testing.T) {
	all := shipped(t)
	for _, c := range []string{"components/autoscale", "components/monitoring"} {
		all[c] = componentOnly(t, memCopy(t), c)
	}
	for dir, r := range all {
		for _, p := range namespaceProblems(r) {
			t.Errorf("%s: %s", dir, p)
		}
		if strings.HasPrefix(dir, "components/") {
			continue
		}
		found := false
		for _, o := range r.Objects {
			found = found || (o.Kind == "Namespace" && o.Name == namespace)
		}
		if !found {
			t.Errorf("%s renders no Namespace %s", dir, namespace)
		}
	}
}

// The check catches an object an overlay adds without a namespace, and one
// put in another namespace.
func TestNamespaceCheckCatchesStrays(t *testing.T) {
	mem := memCopy(t)
	stray := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stray\n"
	elsewhere := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: elsewhere\n  namespace: default\n"
	if err := mem.WriteFile("/k8s/stray/objects.yaml", []byte(stray+"---\n"+elsewhere)); err != nil {
		t.Fatal(err)
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../base\n  - objects.yaml\n"
	if err := mem.WriteFile("/k8s/stray/kustomization.yaml", []byte(k)); err != nil {
		t.Fatal(err)
	}
	r, err := load(mem, "/k8s/stray")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(namespaceProblems(r), "\n")
	for _, want := range []string{"ConfigMap stray has no namespace", "ConfigMap elsewhere is in namespace default"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q do not say %q", got, want)
		}
	}
	if strings.Contains(got, "redfix-bot") || strings.Contains(got, "nats") {
		t.Errorf("the base's own objects are reported: %s", got)
	}
}
