// Package deploy_test checks the repository's Dockerfile against the rules
// a linter would apply, since no Docker engine or hadolint package is
// available where redfix is developed.
package deploy_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Line int
	Cmd  string // upper case
	Args string
}

func parseDockerfile(src string) []instruction {
	var out []instruction
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		start := i + 1
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			next := strings.TrimSpace(lines[i])
			if strings.HasPrefix(next, "#") {
				continue
			}
			l = strings.TrimSuffix(l, "\\") + " " + next
		}
		cmd, args, _ := strings.Cut(l, " ")
		out = append(out, instruction{Line: start, Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)})
	}
	return out
}

var (
	exactTag = regexp.MustCompile(`^[a-z0-9./_-]+:(\d+\.\d+\.\d+)[A-Za-z0-9._-]*(@sha256:[0-9a-f]{64})?$`)
	digest   = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
)

// lint returns the rules the Dockerfile breaks.
func lint(src string) []string {
	var problems []string
	add := func(in instruction, format string, a ...any) {
		problems = append(problems, fmt.Sprintf("line %d: %s", in.Line, fmt.Sprintf(format, a...)))
	}
	args := map[string]string{}
	stageUser := map[string]string{} // stage name → its last USER
	var stage, user string
	var finals []string
	for _, in := range parseDockerfile(src) {
		switch in.Cmd {
		case "ARG":
			if k, v, ok := strings.Cut(in.Args, "="); ok && stage == "" {
				args[k] = strings.Trim(v, `"`)
			}
		case "FROM":
			f := strings.Fields(in.Args)
			image := os.Expand(f[0], func(k string) string { return args[k] })
			name := ""
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				name = f[2]
			}
			if parent, ok := stageUser[image]; ok {
				user = parent // built on an earlier stage: inherits its user
			} else {
				user = ""
				if strings.HasSuffix(image, ":latest") || !strings.Contains(image, ":") && !digest.MatchString(image) {
					add(in, "FROM %s: not pinned (latest, or no tag)", image)
				} else if !exactTag.MatchString(image) && !digest.MatchString(image) {
					add(in, "FROM %s: not pinned to an exact version or a digest", image)
				}
			}
			stage = name
			finals = append(finals, name)
		case "USER":
			user = in.Args
		case "ADD":
			if strings.Contains(in.Args, "://") {
				add(in, "ADD of a URL: download in a RUN with a checksum instead")
			}
		case "RUN":
			if strings.Contains(in.Args, "apt-get install") {
				if !strings.Contains(in.Args, "--no-install-recommends") {
					add(in, "apt-get install without --no-install-recommends")
				}
				if !strings.Contains(in.Args, "rm -rf /var/lib/apt/lists/*") {
					add(in, "apt-get install leaves /var/lib/apt/lists in the layer")
				}
			}
			if strings.Contains(in.Args, "curl") && strings.Contains(in.Args, "| sh") {
				add(in, "pipes a download into a shell")
			}
		}
		if stage != "" {
			stageUser[stage] = user
		}
	}
	// Every image a target builds runs as a user other than root.
	for _, name := range []string{"bot", "worker"} {
		u, ok := stageUser[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("no stage %q", name))
		case u == "" || u == "root" || u == "0" || strings.HasPrefix(u, "0:") || strings.HasPrefix(u, "root:"):
			problems = append(problems, fmt.Sprintf("stage %s runs as root (USER %q)", name, u))
		}
	}
	if !strings.Contains(src, "HEALTHCHECK") && !strings.Contains(src, "/healthz") {
		problems = append(problems, "no HEALTHCHECK and no word on how health is probed")
	}
	return problems
}

func TestDockerfileRules(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range lint(string(b)) {
		t.Error("Dockerfile " + p)
	}
}

// The rules catch what they are for: each broken copy fails on its rule.
func TestDockerfileRulesCatch(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	cases := []struct{ name, old, new, want string }{
		{"floating tag", "ARG GO_IMAGE=golang:1.26.8-bookworm", "ARG GO_IMAGE=golang:1.26-bookworm", "not pinned to an exact version"},
		{"latest", "ARG GO_IMAGE=golang:1.26.8-bookworm", "ARG GO_IMAGE=golang:latest", "not pinned (latest"},
		{"root", "USER 10001\n", "USER root\n", "runs as root"},
		{"no user", "USER 10001\n", "", "runs as root"},
		{"apt lists kept", " && rm -rf /var/lib/apt/lists/* \\\n", "", "/var/lib/apt/lists"},
		{"recommends", "install -y --no-install-recommends", "install -y", "--no-install-recommends"},
		{"add url", "COPY go.mod go.sum ./\n", "COPY go.mod go.sum ./\nADD https://example.invalid/tool.tgz /tmp/\n", "ADD of a URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.old) {
				t.Fatalf("the Dockerfile no longer holds %q: update the case", c.old)
			}
			got := strings.Join(lint(strings.Replace(good, c.old, c.new, 1)), "\n")
			if !strings.Contains(got, c.want) {
				t.Fatalf("broken copy: problems %q, want one about %q", got, c.want)
			}
		})
	}
}
