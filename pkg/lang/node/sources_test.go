package node

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
)

// Each archive of testdata/sources is a checkout's package.json and
// lockfile, the registry setup installs from, and what is refused: the
// lines of the setup's error after its first, in any order (none: nothing
// is refused).
func TestCheckSources(t *testing.T) {
	files, err := filepath.Glob("testdata/sources/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no archives: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var reg registry
			var manifest, lock []byte
			var lockfile string
			var want []string
			for _, f := range ar.Files {
				switch f.Name {
				case "registry":
					if reg, err = parseRegistry(string(f.Data)); err != nil {
						t.Fatal(err)
					}
				case "package.json":
					manifest = f.Data
				case "want":
					want = nonEmpty(strings.Split(string(f.Data), "\n"))
				default:
					lockfile, lock = f.Name, f.Data
				}
			}
			err = checkSources(reg, lockfile, manifest, lock)
			if len(want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("nothing refused, want:\n%s", strings.Join(want, "\n"))
			}
			lines := strings.Split(err.Error(), "\n")
			head := "node setup: " + lockfile + " takes packages from outside the registry " + reg.String() + ", refused before any install:"
			if lines[0] != head {
				t.Errorf("first line %q, want %q", lines[0], head)
			}
			var got []string
			for _, l := range lines[1:] {
				got = append(got, strings.TrimSpace(l))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("refused:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestCheckSourcesPnpmOtherRegistry: a package a pnpm 5 lockfile says it
// resolved from a registry other than setup's (its own "registry" field)
// is refused, named by its key and that registry. The other registry is
// made from setup's, so that no registry's address is written here.
func TestCheckSourcesPnpmOtherRegistry(t *testing.T) {
	const setupRegistry = "https://registry.example/"
	reg, err := parseRegistry(setupRegistry)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(setupRegistry, "registry.", "elsewhere.", 1)
	const integrity = "sha512-6FlzubTLZG3J2a/NVCAleEhjzq5oxgHyaCU9yYXvcLsvoVaHJq/s5xXI6/XXP6tz7R9xAOtHnSO/tXtF3WRTlA=="
	lock := "lockfileVersion: 5.4\n\nspecifiers:\n  ms: 2.1.3\n\ndependencies:\n  ms: 2.1.3\n\npackages:\n\n" +
		"  /ms/2.1.3:\n    resolution: {integrity: " + integrity + "}\n    dev: false\n\n" +
		"  /other/1.0.0:\n    resolution: {integrity: " + integrity + ", registry: '" + other + "'}\n    dev: false\n"
	manifest := []byte(`{"name": "single", "dependencies": {"ms": "2.1.3"}}`)
	err = checkSources(reg, "pnpm-lock.yaml", manifest, []byte(lock))
	want := `"/other/1.0.0" from "` + other + `": a tarball outside the registry`
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "/ms/2.1.3") {
		t.Errorf("refused: %v\nwant only: %s", err, want)
	}
}

func nonEmpty(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// A registry is a URL prefix: its scheme, host and path; nothing a
// package manager could read as another host passes for one of its URLs.
func TestRegistryHolds(t *testing.T) {
	reg, err := parseRegistry("https://Artifacts.example:443/api/npm/remote")
	if err != nil {
		t.Fatal(err)
	}
	if reg.String() != "https://Artifacts.example:443/api/npm/remote/" {
		t.Errorf("registry %s", reg)
	}
	for u, want := range map[string]bool{
		"https://artifacts.example/api/npm/remote/x/-/x-1.0.0.tgz":          true,
		"HTTPS://ARTIFACTS.EXAMPLE/api/npm/remote/x/-/x-1.0.0.tgz":          true,
		"https://artifacts.example:443/api/npm/remote/@s/x/-/x-1.0.0.tgz":   true,
		"https://artifacts.example/api/npm/remote/x/-/x-1.0.0.tgz#sha1":     true,
		"https://artifacts.example/api/npm/remote":                          false,
		"https://artifacts.example/api/npm/remote-evil/x-1.0.0.tgz":         false,
		"https://artifacts.example/api/npm/REMOTE/x-1.0.0.tgz":              false,
		"http://artifacts.example/api/npm/remote/x-1.0.0.tgz":               false,
		"https://artifacts.example:8443/api/npm/remote/x-1.0.0.tgz":         false,
		"https://artifacts.example.evil.example/api/npm/remote/x-1.0.0.tgz": false,
		"https://evil.example/api/npm/remote/x-1.0.0.tgz":                   false,
		"https://user@artifacts.example/api/npm/remote/x-1.0.0.tgz":         false,
		"https://artifacts.example@evil.example/api/npm/remote/x.tgz":       false,
		`https://evil.example\@artifacts.example/api/npm/remote/x.tgz`:      false,
		"https://artifacts.example/api/npm/remote/../../evil/x.tgz":         false,
		"https://artifacts.example/api/npm/remote/%2E%2E/evil/x.tgz":        false,
		"https://artifacts.example/api/npm/remote/a%2F..%2F..%2Fx.tgz":      false,
		"https://artifacts.%65xample/api/npm/remote/x.tgz":                  false,
		"https://artifacts.example/api/npm/remote/x y.tgz":                  false,
		"https://artifacts.exa\nmple/api/npm/remote/x.tgz":                  false,
		"git+https://artifacts.example/api/npm/remote/x.git":                false,
		"artifacts.example/api/npm/remote/x.tgz":                            false,
	} {
		if got := reg.holds(u); got != want {
			t.Errorf("holds(%q) = %v, want %v", u, got, want)
		}
	}
	for _, bad := range []string{"", "registry.example", "ftp://registry.example/", "https:///x", "https://u:p@registry.example/", "https://registry.example/?token=x", "file:///srv/npm/"} {
		if _, err := parseRegistry(bad); err == nil {
			t.Errorf("parseRegistry(%q) accepted", bad)
		}
	}
}

// The default registry is npm's own configuration, asked with the
// scrubbed environment (HOME kept: the operator's ~/.npmrc counts), never
// a checkout's .npmrc; the driver's setting wins over it.
func TestRegistryDefaultIsNPMs(t *testing.T) {
	nodetest.Require(t)
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".npmrc"), []byte("registry=https://mirror.example/npm/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("npm_config_registry", "https://from-the-environment.example/")
	registries.Delete(npm)
	t.Cleanup(func() { registries.Delete(npm) })
	reg, err := Driver{}.registry(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if reg.String() != "https://mirror.example/npm/" {
		t.Errorf("default registry %s, want the one of ~/.npmrc", reg)
	}
	reg, err = Driver{Registry: "http://127.0.0.1:4873"}.registry(t.Context())
	if err != nil || reg.String() != "http://127.0.0.1:4873/" {
		t.Errorf("the driver's registry: %s, %v", reg, err)
	}
	if _, err := (Driver{Registry: "registry.example"}).registry(t.Context()); err == nil {
		t.Error("a registry without a scheme was taken")
	}
}

// Whatever a lockfile holds, reading it ends in an answer, never a panic.
func FuzzCheckSources(f *testing.F) {
	files, _ := filepath.Glob("testdata/sources/*.txtar")
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, fl := range ar.Files {
			if fl.Name != "registry" && fl.Name != "want" {
				f.Add(fl.Data)
			}
		}
	}
	reg, err := parseRegistry("https://registry.example/npm/")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lockfile := range []string{"package-lock.json", "pnpm-lock.yaml", "yarn.lock"} {
			_ = checkSources(reg, lockfile, data, data)
		}
	})
}
