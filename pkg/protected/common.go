package protected

// Common are the kinds of protected files of every repository, whatever
// its language, checked in order after the driver's own: the first that
// claims a path wins (.github/CODEOWNERS is an ownership file before it is
// GitHub's).
var Common = []Kind{
	{
		What: "an ownership file",
		Why:  "ownership files decide who must review a change",
		Names: []string{
			"CODEOWNERS", "OWNERS", "OWNERS_ALIASES", "SECURITY_CONTACTS",
		},
	},
	{
		// .gitignore is left out: it only hides untracked files from git
		// add, and a patch is made of what the agent edited, so ignoring
		// a file changes neither the patch nor what CI checks out.
		What: "a git metadata file",
		Why:  "git itself reads it: submodule URLs (ext:: runs a command), filters, diff and merge drivers",
		Names: []string{
			".gitmodules", ".gitattributes", ".lfsconfig",
		},
		Dirs: []string{".git"},
	},
	{
		What: "a git hook or its configuration",
		Why:  "hooks run on developer machines at commit and push",
		Names: []string{
			"lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml", "lefthook-local.yml", "lefthook-local.yaml",
			".pre-commit-config.yaml", ".pre-commit-config.yml", ".pre-commit-hooks.yaml",
		},
		Dirs: []string{".githooks", ".husky"},
	},
	{
		What:  "a developer environment file",
		Why:   "editors, direnv and dev containers run what it says on developer machines",
		Names: []string{".envrc"},
		Dirs:  []string{".devcontainer", ".vscode"},
	},
	{
		What: CI.What,
		Why:  CI.Why,
		Names: []string{
			".gitlab-ci.yml", ".gitlab-ci.yaml", ".travis.yml", ".drone.yml", ".drone.yaml",
			"Jenkinsfile", "Jenkinsfile.*", "azure-pipelines.yml", "azure-pipelines.yaml",
			"bitbucket-pipelines.yml", "appveyor.yml", ".appveyor.yml", "cloudbuild.yaml", "cloudbuild.yml",
			".woodpecker.yml", ".woodpecker.yaml", "codefresh.yml",
		},
		Dirs: []string{".github", ".gitlab", ".circleci", ".buildkite", ".woodpecker", ".tekton"},
	},
	{
		// Shell and other command scripts count wherever they are (build.sh,
		// scripts/ci.sh, hack/verify.sh): CI and make run them, and a
		// repair does not need them. Code under scripts/ or hack/ stays
		// code: the other gates build, check and test it like any other.
		What: Build.What,
		Why:  Build.Why,
		Names: []string{
			"Makefile", "GNUmakefile", "makefile", "Makefile.*", "*.mk",
			"Dockerfile", "Dockerfile.*", "*.dockerfile", "Containerfile", "Containerfile.*", ".dockerignore",
			"docker-compose*.yml", "docker-compose*.yaml", "compose.yml", "compose.yaml", "compose.*.yml", "compose.*.yaml",
			"BUILD", "BUILD.bazel", "WORKSPACE", "WORKSPACE.bazel", "WORKSPACE.bzlmod", "MODULE.bazel", "*.bzl",
			".bazelrc", ".bazelversion",
			"Taskfile.yml", "Taskfile.yaml", "Taskfile.dist.yml", "Taskfile.dist.yaml",
			"justfile", ".justfile", "Earthfile",
			"CMakeLists.txt", "*.cmake",
			"*.sh", "*.bash", "*.zsh", "*.ps1", "*.bat", "*.cmd",
		},
	},
	{
		What: "vendored code",
		Why:  "vendored code is a copy of a dependency, not the repository's own",
		Dirs: []string{"vendor"},
	},
}

// CI and Build are the words of two kinds a driver adds files to (its
// linters' configuration is CI's, its build tools' files are build files),
// so that the evidence says the same of them.
var (
	CI    = Kind{What: "a CI configuration file", Why: "CI configuration decides what CI runs and checks, with the repository's secrets"}
	Build = Kind{What: "a build file", Why: "build files run on CI and developer machines"}
)
