package python

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Requirement files are read as pip reads them, minus what would install
// the project itself or take dependencies from elsewhere than the
// configured index.
func TestReadRequirements(t *testing.T) {
	dir := repo(t, map[string]string{
		"requirements.txt": `# runtime
requests>=2.0 ; python_version >= "3.8"  # a comment
-r requirements/base.txt
-c constraints.txt
-e .
.
./libs/local
mypkg @ file:///src/mypkg
--index-url http://elsewhere.example/simple
--extra-index-url=http://also.example/simple
-f ./wheels
--pre
hashed==1.0 \
    --hash=sha256:abcd \
    --hash sha256:ef01
weird==1.0 --install-option=--prefix=/tmp
`,
		"requirements/base.txt":  "attrs==23.1\n-r ../requirements.txt\n",
		"requirements/dev.txt":   "pytest-mock\n",
		"requirements-docs.txt":  "sphinx\n",
		"constraints.txt":        "urllib3<3\n",
		"requirements-test.txt":  "-r /etc/passwd\n-r ../outside.txt\n",
		"docs/requirements.txt":  "never-read\n",
		"requirements/README.md": "not a requirement file\n",
	})
	d := readRequirements(dir)
	want := []string{
		"requests>=2.0 ; python_version >= \"3.8\"",
		"attrs==23.1",
		"--pre",
		"hashed==1.0 --hash=sha256:abcd --hash=sha256:ef01",
		"weird==1.0",
		"pytest-mock",
	}
	if !slices.Equal(d.requirements, want) {
		t.Errorf("requirements = %q\nwant %q", d.requirements, want)
	}
	if !slices.Equal(d.constraints, []string{"urllib3<3"}) {
		t.Errorf("constraints = %q", d.constraints)
	}
	wantFiles := []string{"requirements-test.txt", "requirements.txt", "requirements/base.txt", "constraints.txt", "requirements/dev.txt"}
	if !slices.Equal(d.files, wantFiles) {
		t.Errorf("files = %q, want %q", d.files, wantFiles)
	}
	for _, left := range []string{`"-e ."`, `"."`, `"./libs/local"`, `"mypkg @ file:///src/mypkg"`, "elsewhere.example", "also.example", `"-f ./wheels"`, "/etc/passwd", "../outside.txt"} {
		if !contains(d.notes, left) {
			t.Errorf("no note says %s was left out: %q", left, d.notes)
		}
	}
}

// A requirement from pyproject.toml or setup.cfg is one line of a file
// redfix writes: nothing in it may add an option or another line.
func TestRequirementIsOneSpecifier(t *testing.T) {
	for in, want := range map[string]string{
		"requests>=2":                            "requests>=2",
		"pkg[extra]==1.0; sys_platform=='linux'": "pkg[extra]==1.0; sys_platform=='linux'",
		"pkg @ https://example.com/pkg.whl":      "pkg @ https://example.com/pkg.whl",
	} {
		if got, why := requirement(in); got != want || why != "" {
			t.Errorf("requirement(%q) = %q, %q", in, got, why)
		}
	}
	for _, in := range []string{"pkg\n--index-url http://evil", "--index-url=http://evil", "-e .", "../sibling", "/abs/path", "pkg @ file:///x", ""} {
		if got, why := requirement(in); why == "" {
			t.Errorf("requirement(%q) = %q, taken", in, got)
		}
	}
}

// A requirements file that is a link is not followed out of the checkout.
func TestReadRequirementsRefusesLinks(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret-package\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := repo(t, map[string]string{})
	if err := os.Symlink(outside, filepath.Join(dir, "requirements.txt")); err != nil {
		t.Fatal(err)
	}
	d := readRequirements(dir)
	if len(d.requirements) != 0 || !contains(d.notes, "requirements.txt: not read") {
		t.Errorf("a linked requirements file: %q, notes %q", d.requirements, d.notes)
	}
}
