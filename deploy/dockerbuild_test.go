package deploy_test

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// stage is one stage of the Dockerfile as far as building the binaries
// goes: its base image (ARGs expanded), its ARG defaults and ENV, and its
// RUN lines.
type stage struct {
	Name, Base string
	Args, Env  map[string]string
	Runs       []string
}

// stages reads the Dockerfile's stages, in order.
func stages(src string) []*stage {
	global := map[string]string{}
	var out []*stage
	var cur *stage
	for _, in := range parseDockerfile(src) {
		switch in.Cmd {
		case "ARG":
			k, v, _ := strings.Cut(in.Args, "=")
			v = strings.Trim(v, `"`)
			if cur == nil {
				global[k] = v
			} else {
				cur.Args[k] = v
			}
		case "FROM":
			f := strings.Fields(in.Args)
			cur = &stage{Base: os.Expand(f[0], func(k string) string { return global[k] }), Args: map[string]string{}, Env: map[string]string{}}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				cur.Name = f[2]
			}
			for _, s := range out {
				if s.Name != "" && s.Name == cur.Base {
					cur.Base = s.Base // built on an earlier stage: the same libc
				}
			}
			out = append(out, cur)
		case "ENV":
			for _, kv := range strings.Fields(in.Args) {
				if k, v, ok := strings.Cut(kv, "="); ok {
					cur.Env[k] = v
				}
			}
		case "RUN":
			cur.Runs = append(cur.Runs, in.Args)
		}
	}
	return out
}

// imageLibc is the C library of the golang images' Debian suites, by the
// tag's suffix: the libc the images' binaries link against and run on.
var imageLibc = map[string]struct {
	debian string // VERSION_ID in /etc/os-release
	glibc  string
}{
	"bookworm": {"12", "2.36"},
	"trixie":   {"13", "2.41"},
}

// golangImage reads golang:VERSION-SUITE.
var golangImage = regexp.MustCompile(`^golang:(\d+\.\d+\.\d+)-([a-z]+)(@sha256:[0-9a-f]{64})?$`)

// sameBase checks that this machine is what the image's base is: the same
// Go release and the same Debian release (its gcc and glibc), so that a
// build here is the build in the image. It returns the base's glibc.
func sameBase(t *testing.T, base string) string {
	t.Helper()
	m := golangImage.FindStringSubmatch(base)
	if m == nil {
		t.Fatalf("the build stage's base %q is not golang:VERSION-SUITE: teach this test its C toolchain and libc", base)
	}
	libc, ok := imageLibc[m[2]]
	if !ok {
		t.Fatalf("base %s: no libc known for the Debian suite %q: add it to imageLibc", base, m[2])
	}
	var problems []string
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		t.Fatalf("go env GOVERSION: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "go"+m[1] {
		problems = append(problems, fmt.Sprintf("the image builds with Go %s, this machine has %s", m[1], got))
	}
	osr, _ := os.ReadFile("/etc/os-release")
	if !strings.Contains(string(osr), "\nVERSION_ID=\""+libc.debian+"\"") {
		problems = append(problems, fmt.Sprintf("the image is Debian %s (%s), this machine is not", libc.debian, m[2]))
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		problems = append(problems, "no gcc here (the golang image has Debian's)")
	}
	if len(problems) > 0 {
		msg := fmt.Sprintf("this machine is not the Dockerfile's base %s: %s", base, strings.Join(problems, "; "))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return libc.glibc
}

// The images' binaries build as the Dockerfile builds them, with its flags
// and its environment, on the base it names (this machine is that base: the
// same Go and Debian release, its gcc and glibc), and they start. They link
// the base's glibc, and need no newer one than the image they run in has.
//
// The build shares the toolchain's cache with the suites that build the
// commands (internal/testsvc builds with -trimpath too): in a full run only
// the links are new.
func TestDockerfileBuildsTheBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both commands (-short)")
	}
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	all := stages(string(b))
	var build *stage
	for _, s := range all {
		if s.Name == "build" {
			build = s
		}
	}
	if build == nil {
		t.Fatal("no stage named build")
	}
	glibc := sameBase(t, build.Base)
	for _, s := range all {
		if s.Name == "bot" || s.Name == "worker" {
			if s.Base != build.Base {
				t.Errorf("stage %s runs on %s, the binaries are built on %s: a libc other than the one they link", s.Name, s.Base, build.Base)
			}
		}
	}

	out := t.TempDir()
	var built []string
	for _, run := range build.Runs {
		if !strings.Contains(run, "go build") {
			continue
		}
		for _, f := range regexp.MustCompile(`-o /out/(\S+)`).FindAllStringSubmatch(run, -1) {
			built = append(built, f[1])
		}
		runBuildLine(t, strings.ReplaceAll(run, "/out/", out+"/"), build)
	}
	if strings.Join(built, " ") != "bot worker" {
		t.Fatalf("the build stage builds %q, want bot and worker", built)
	}
	for _, name := range built {
		bin := filepath.Join(out, name)
		checkLinksLibc(t, bin, glibc)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		help, err := exec.CommandContext(ctx, bin, "--help").CombinedOutput()
		cancel()
		if err != nil || !strings.Contains(string(help), "usage: "+name) {
			t.Errorf("%s --help: %v\n%s", name, err, help)
		}
	}
}

// runBuildLine runs a RUN line as the image's shell would: in the
// checkout (the stage's WORKDIR holds a copy of it), with the stage's ARG
// defaults and ENV, and the golang image's own setting of the toolchain.
func runBuildLine(t *testing.T, line string, s *stage) {
	t.Helper()
	env := []string{"GOTOOLCHAIN=local"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CGO_ENABLED", "GOFLAGS", "CC", "CGO_CFLAGS", "CGO_LDFLAGS", "GOTOOLCHAIN", "GOOS", "GOARCH":
			continue // the image sets none of these: the Dockerfile's line decides
		}
		env = append(env, kv)
	}
	for k, v := range s.Args {
		if k == "REVISION" && v == "" {
			v = "0123456789abcdef0123456789abcdef01234567"
		}
		env = append(env, k+"="+v)
	}
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	cmd.Dir = ".."
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Dockerfile's build line\n  %s\nfails on its base: %v\n%s", line, err, out)
	}
}

// checkLinksLibc checks that bin is linked dynamically against glibc (cgo,
// for tree-sitter's grammars) and needs no glibc newer than want.
func checkLinksLibc(t *testing.T, bin, want string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	if !strings.Contains(strings.Join(libs, " "), "libc.so.6") {
		t.Errorf("%s links %q, not glibc: is cgo off?", filepath.Base(bin), libs)
	}
	syms, err := f.ImportedSymbols()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	newest := "0"
	for _, s := range syms {
		if v, ok := strings.CutPrefix(s.Version, "GLIBC_"); ok && versionLess(newest, v) {
			newest = v
		}
	}
	if versionLess(want, newest) {
		t.Errorf("%s needs glibc %s, the image has %s", filepath.Base(bin), newest, want)
	}
	t.Logf("%s: links %s, needs glibc %s (the image has %s)", filepath.Base(bin), strings.Join(libs, ", "), newest, want)
}

// versionLess compares dotted versions numerically.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
