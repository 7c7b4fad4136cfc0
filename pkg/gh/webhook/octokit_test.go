package webhook

import (
	"os"
	"path/filepath"
	"testing"
)

// octokitDir finds an unpacked npm package of GitHub's published
// descriptions, under .cache/octokit at the module's root, where .ci/run
// installs them.
func octokitDir(t *testing.T, name string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, ".cache", "octokit", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed under .cache/octokit: .ci/run installs it", name)
	}
	t.Skipf("%s is not installed under .cache/octokit (run .ci/run, or npm pack it there)", name)
	return ""
}
