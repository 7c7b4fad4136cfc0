package validators

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/redfix/redfix/pkg/unidiff"
)

// Protected files are those a repair of Go code has no business editing:
// what builds, tests and ships the code (build files, CI), who reviews it
// (ownership files), how git and developers' machines treat the checkout
// (git metadata, hooks, editor and environment settings), vendored code and
// the module files. A patch that edits one is rejected unless the
// repository's policy names the file explicitly: an allowed-paths pattern
// matches it and, at the protected name itself, the pattern holds that name
// (".github/**", "**/Makefile", "docs/CODEOWNERS") or the kind's own pattern
// ("**/*.mk", "Dockerfile.*"), never a wildcard. So "**", "*" or "*.yml",
// which a repository writes to allow code anywhere, unlock none of them,
// and "docs" (a directory, covering what is below it) does not unlock
// docs/CODEOWNERS. The module files are checked by what changes in them
// (see moduleViolations): a version bump of a dependency passes without a
// policy.

// protectedKind is one kind of protected file.
type protectedKind struct {
	what string // "a build file"
	why  string // why editing it is not a repair
	// names are patterns (path.Match, compared in lower case: make, git
	// and developers' file systems may fold case) for the file's base name;
	// dirs are names of directories everything below which is protected.
	names, dirs []string
	// module marks the Go module files, whose changes are read (exact
	// names, as the go command reads them).
	module bool
}

// protectedKinds are checked in order: the first that claims a path wins
// (.github/CODEOWNERS is an ownership file before it is GitHub's).
var protectedKinds = []protectedKind{
	{
		what:   "a module file",
		why:    "the module files decide which code is built",
		names:  []string{"go.mod", "go.sum", "go.work", "go.work.sum"},
		module: true,
	},
	{
		what: "an ownership file",
		why:  "ownership files decide who must review a change",
		names: []string{
			"CODEOWNERS", "OWNERS", "OWNERS_ALIASES", "SECURITY_CONTACTS",
		},
	},
	{
		// .gitignore is left out: it only hides untracked files from git
		// add, and a patch is made of what the agent edited, so ignoring
		// a file changes neither the patch nor what CI checks out.
		what: "a git metadata file",
		why:  "git itself reads it: submodule URLs (ext:: runs a command), filters, diff and merge drivers",
		names: []string{
			".gitmodules", ".gitattributes", ".lfsconfig",
		},
		dirs: []string{".git"},
	},
	{
		what: "a git hook or its configuration",
		why:  "hooks run on developer machines at commit and push",
		names: []string{
			"lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml", "lefthook-local.yml", "lefthook-local.yaml",
			".pre-commit-config.yaml", ".pre-commit-config.yml", ".pre-commit-hooks.yaml",
		},
		dirs: []string{".githooks", ".husky"},
	},
	{
		what:  "a developer environment file",
		why:   "editors, direnv and dev containers run what it says on developer machines",
		names: []string{".envrc"},
		dirs:  []string{".devcontainer", ".vscode"},
	},
	{
		what: "a CI configuration file",
		why:  "CI configuration decides what CI runs and checks, with the repository's secrets",
		names: []string{
			".gitlab-ci.yml", ".gitlab-ci.yaml", ".travis.yml", ".drone.yml", ".drone.yaml",
			"Jenkinsfile", "Jenkinsfile.*", "azure-pipelines.yml", "azure-pipelines.yaml",
			"bitbucket-pipelines.yml", "appveyor.yml", ".appveyor.yml", "cloudbuild.yaml", "cloudbuild.yml",
			".woodpecker.yml", ".woodpecker.yaml", "codefresh.yml",
			// Linter and type checker configuration: what CI's checks (and
			// the static gate's) let through.
			".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json",
			".eslintrc", ".eslintrc.*", "eslint.config.*", ".eslintignore",
			"tsconfig.json", "tsconfig.*.json", "jsconfig.json",
		},
		dirs: []string{".github", ".gitlab", ".circleci", ".buildkite", ".woodpecker", ".tekton"},
	},
	{
		// Shell and other command scripts count wherever they are (build.sh,
		// scripts/ci.sh, hack/verify.sh): CI and make run them, and a Go
		// repair does not need them. Go files under scripts/ or hack/ stay
		// code: the other gates build, vet and test them like any other.
		what: "a build file",
		why:  "build files run on CI and developer machines",
		names: []string{
			"Makefile", "GNUmakefile", "makefile", "Makefile.*", "*.mk",
			"Dockerfile", "Dockerfile.*", "*.dockerfile", "Containerfile", "Containerfile.*", ".dockerignore",
			"docker-compose*.yml", "docker-compose*.yaml", "compose.yml", "compose.yaml", "compose.*.yml", "compose.*.yaml",
			"BUILD", "BUILD.bazel", "WORKSPACE", "WORKSPACE.bazel", "WORKSPACE.bzlmod", "MODULE.bazel", "*.bzl",
			".bazelrc", ".bazelversion",
			"Taskfile.yml", "Taskfile.yaml", "Taskfile.dist.yml", "Taskfile.dist.yaml",
			"justfile", ".justfile", "magefile.go", "Earthfile", ".goreleaser.yml", ".goreleaser.yaml",
			"CMakeLists.txt", "*.cmake",
			"*.sh", "*.bash", "*.zsh", "*.ps1", "*.bat", "*.cmd",
		},
		dirs: []string{"magefiles"},
	},
	{
		what: "vendored code",
		why:  "vendored code is a copy of a dependency, not the repository's own",
		dirs: []string{"vendor"},
	},
}

// protectedPath is what protects a path: its kind and the index of the
// segment that makes it protected (the protected directory, or the base).
type protectedPath struct {
	kind *protectedKind
	key  int
}

// classifyProtected returns what protects p, if anything.
func classifyProtected(p string) (protectedPath, bool) {
	segs := strings.Split(p, "/")
	base := len(segs) - 1
	for i := range protectedKinds {
		k := &protectedKinds[i]
		if k.module {
			if matchesAny(k.names, segs[base], false) {
				return protectedPath{k, base}, true
			}
			continue
		}
		if matchesAny(k.names, segs[base], true) {
			return protectedPath{k, base}, true
		}
		for j, seg := range segs[:base] {
			if matchesAny(k.dirs, seg, true) {
				return protectedPath{k, j}, true
			}
		}
	}
	return protectedPath{}, false
}

// matchesAny reports whether name matches one of the patterns. A Go source
// file matches only a pattern that spells its name (magefile.go): code named
// dockerfile.go or makefile.go is code.
func matchesAny(patterns []string, name string, fold bool) bool {
	if fold {
		name = strings.ToLower(name)
	}
	goFile := strings.HasSuffix(name, ".go")
	for _, pat := range patterns {
		if fold {
			pat = strings.ToLower(pat)
		}
		if goFile && strings.ContainsAny(pat, "*?[") {
			continue
		}
		if ok, err := path.Match(pat, name); err == nil && ok {
			return true
		}
	}
	return false
}

// protectedViolations are the evidence against f's edits of protected
// files that the policy does not name.
func (v *Validators) protectedViolations(dir string, f unidiff.File) []string {
	var bad []string
	for _, p := range f.Paths() {
		pp, ok := classifyProtected(p)
		if !ok || v.policyNames(p, pp) {
			continue
		}
		if pp.kind.module {
			bad = append(bad, moduleViolations(dir, p, f)...)
			continue
		}
		bad = append(bad, fmt.Sprintf("%s: %s %s (%s; %s)", p, editVerb(f), pp.kind.what, pp.kind.why, notAllowed))
	}
	return bad
}

// notAllowed closes the evidence of a protected file.
const notAllowed = "the repository's policy does not allow it"

// editVerb says what the patch does to f.
func editVerb(f unidiff.File) string {
	switch {
	case f.OldPath == "":
		return "adds"
	case f.NewPath == "":
		return "deletes"
	case f.OldPath != f.NewPath:
		return "renames"
	}
	return "edits"
}

// policyNames reports whether an allowed-paths pattern names the protected
// path p explicitly (see the comment at the top of this file).
func (v *Validators) policyNames(p string, pp protectedPath) bool {
	segs := strings.Split(p, "/")
	names := func(pat string) bool {
		return pat == segs[pp.key] || slices.Contains(pp.kind.names, pat) || slices.Contains(pp.kind.dirs, pat)
	}
	for _, g := range v.cfg.AllowedPaths {
		if globNames(strings.Split(strings.Trim(g, "/"), "/"), segs, 0, pp.key, names) {
			return true
		}
	}
	return false
}

// globNames is globMatch of pat against segs[i:] that also requires the
// pattern segment matched against segs[key] to be one that names says names
// it: a "**" may not stand for it, and a pattern may not stop above it.
func globNames(pat, segs []string, i, key int, names func(string) bool) bool {
	if len(pat) == 0 {
		// "dir" covers "dir/…", naming the protected segment only when
		// it was matched already.
		return i > key
	}
	if pat[0] == "**" {
		for j := i; j <= len(segs); j++ {
			if i <= key && key < j {
				break // "**" would stand for the protected segment
			}
			if globNames(pat[1:], segs, j, key, names) {
				return true
			}
		}
		return false
	}
	if i == len(segs) {
		return false
	}
	if ok, err := path.Match(pat[0], segs[i]); err != nil || !ok {
		return false
	}
	if i == key && !names(pat[0]) {
		return false
	}
	return globNames(pat[1:], segs, i+1, key, names)
}
