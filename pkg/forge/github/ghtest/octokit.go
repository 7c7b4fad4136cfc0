package ghtest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// OctokitEnv names the directory that holds GitHub's published descriptions,
// extracted from the npm packages @octokit/openapi, @octokit/openapi-webhooks
// and @octokit/webhooks-examples (.ci/run fills it).
const OctokitEnv = "REDFIX_TEST_OCTOKIT_DIR"

// The packages, as directory names under the octokit directory.
const (
	OpenAPIPackage          = "octokit-openapi-23.0.2"
	WebhooksPackage         = "octokit-openapi-webhooks-12.1.0"
	WebhookExamplesPackage  = "octokit-webhooks-examples-7.6.1"
	restDescriptionRelPath  = OpenAPIPackage + "/generated/api.github.com.json"
	hookDescriptionRelPath  = WebhooksPackage + "/generated/api.github.com.json"
	hookExamplesRelPath     = WebhookExamplesPackage + "/api.github.com/index.json"
	defaultOctokitCacheDirs = ".cache/octokit"
)

// OctokitDir is the directory holding the extracted packages: $REDFIX_TEST_OCTOKIT_DIR,
// else .cache/octokit at the top of the module. A test that needs them calls
// it first: it fails under CI=true when they are missing (CI must install
// them), and skips elsewhere, saying how to get them.
func OctokitDir(t testing.TB) string {
	t.Helper()
	dir := octokitDir()
	if dir != "" {
		return dir
	}
	msg := "GitHub's published REST description is missing: run .ci/run once (it runs `npm pack` for " +
		"@octokit/openapi@23.0.2, @octokit/openapi-webhooks@12.1.0 and @octokit/webhooks-examples@7.6.1 into " +
		defaultOctokitCacheDirs + "), or set " + OctokitEnv + " to a directory holding them extracted"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// RESTDescription is the path of GitHub's REST API description (OpenAPI 3.0).
func RESTDescription(t testing.TB) string {
	t.Helper()
	return filepath.Join(OctokitDir(t), restDescriptionRelPath)
}

// WebhooksDescription is the path of GitHub's webhook payload description.
func WebhooksDescription(t testing.TB) string {
	t.Helper()
	return filepath.Join(OctokitDir(t), hookDescriptionRelPath)
}

// WebhookExamples is the path of the published webhook payload examples
// (a JSON array of {name, actions, examples}).
func WebhookExamples(t testing.TB) string {
	t.Helper()
	return filepath.Join(OctokitDir(t), hookExamplesRelPath)
}

// octokitDir finds a directory where all three packages are, or "".
func octokitDir() string {
	var candidates []string
	if d := os.Getenv(OctokitEnv); d != "" {
		candidates = append(candidates, d)
	}
	if root := moduleRoot(); root != "" {
		candidates = append(candidates, filepath.Join(root, defaultOctokitCacheDirs))
	}
	for _, d := range candidates {
		ok := true
		for _, rel := range []string{restDescriptionRelPath, hookDescriptionRelPath, hookExamplesRelPath} {
			if _, err := os.Stat(filepath.Join(d, rel)); err != nil {
				ok = false
				break
			}
		}
		if ok {
			return d
		}
	}
	return ""
}

// moduleRoot is the directory of go.mod above this source file.
func moduleRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	for d := filepath.Dir(file); d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return ""
}
