package python

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Requirement files are read as pip reads them, minus what would install
// the project itself, take dependencies from elsewhere than the
// configured index, or build them from source; each line left out is a
// note naming the file, the line and why.
func TestReadRequirements(t *testing.T) {
	t.Parallel()
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
evil @ git+https://vcs.example/evil.git@main#egg=evil
https://files.example/bare-1.0-py3-none-any.whl
--no-binary :all:
--no-binary=numpy
--only-binary=:none:
--only-binary=lxml,Pillow
# a comment that ends with a backslash does not continue \
after-comment
`,
		"requirements/base.txt":  "attrs==23.1\n-r ../requirements.txt\n",
		"requirements/dev.txt":   "pytest-mock\n",
		"requirements-docs.txt":  "sphinx\n",
		"constraints.txt":        "urllib3<3\nurllib3 @ https://elsewhere.example/urllib3.whl\n",
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
		"--only-binary=lxml,Pillow",
		"after-comment",
		"pytest-mock",
	}
	if !slices.Equal(d.requirements, want) {
		t.Errorf("requirements = %q\nwant %q", d.requirements, want)
	}
	if !slices.Equal(d.constraints, []string{"urllib3<3"}) {
		t.Errorf("constraints = %q", d.constraints)
	}
	// The base's files first, then the groups' (a group's file that
	// includes the base does not make it the group's).
	wantFiles := []string{"requirements.txt", "requirements/base.txt", "constraints.txt", "requirements-test.txt", "requirements/dev.txt"}
	if !slices.Equal(d.files, wantFiles) {
		t.Errorf("files = %q, want %q", d.files, wantFiles)
	}
	if g := d.groups; len(g) != len(want) || g[0] != "" || g[len(g)-1] != "dev" || !slices.Equal(d.named, []string{"dev", "test"}) {
		t.Errorf("groups = %q (files named for %q); want the base's, then dev's pytest-mock, of files named for dev and test", g, d.named)
	}
	for _, note := range []string{
		`requirements.txt:5: "-e ." left out: editable installs`,
		`requirements.txt:6: "." left out: ` + whyLocal,
		`requirements.txt:7: "./libs/local" left out: ` + whyLocal,
		`requirements.txt:8: "mypkg @ file:///src/mypkg" left out: ` + whyDirect,
		`requirements.txt:9: "--index-url http://elsewhere.example/simple" left out: dependencies come from the configured index`,
		`requirements.txt:10: "--extra-index-url=http://also.example/simple" left out`,
		`requirements.txt:11: "-f ./wheels" left out`,
		`requirements.txt:17: "evil @ git+https://vcs.example/evil.git@main#egg=evil" left out: ` + whyDirect,
		`requirements.txt:18: "https://files.example/bare-1.0-py3-none-any.whl" left out: ` + whyURL,
		`requirements.txt:19: "--no-binary :all:" left out: pip would build these packages from source distributions`,
		`requirements.txt:20: "--no-binary=numpy" left out`,
		`requirements.txt:21: "--only-binary=:none:" left out: only package names or :all:`,
		`constraints.txt:2: "urllib3 @ https://elsewhere.example/urllib3.whl" left out: ` + whyDirect,
		`requirements-test.txt:1: "-r /etc/passwd" left out: not a file of the checkout`,
		`requirements-test.txt:2: "-r ../outside.txt" left out: not a file of the checkout`,
	} {
		if !contains(d.notes, note) {
			t.Errorf("no note says %s\nnotes: %q", note, d.notes)
		}
	}
}

// A requirement from pyproject.toml or setup.cfg is one line of a file
// redfix writes: nothing in it may add an option or another line.
func TestRequirementIsOneSpecifier(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"requests>=2":                            "requests>=2",
		"pkg[extra]==1.0; sys_platform=='linux'": "pkg[extra]==1.0; sys_platform=='linux'",
		"  pkg   >=1 ,<2  ":                      "pkg >=1 ,<2",
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

// Whatever is not a plain name from the index is refused, and says what
// it is, however it is spelled.
func TestRequirementRefusesWhatIsNotANameFromTheIndex(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, why string }{
		{"pkg @ https://example.com/pkg.whl", whyDirect},
		{"pkg@https://example.com/pkg-1.0.tar.gz", whyDirect},
		{"  PKG  @  HTTPS://EXAMPLE.COM/PKG.WHL  ", whyDirect},
		{"Pkg[extra] @ git+https://vcs.example/r.git@v1#egg=pkg", whyDirect},
		{"pkg[a,b]@git+ssh://git@vcs.example/r.git", whyDirect},
		{"pkg @ hg+https://vcs.example/r", whyDirect},
		{"pkg @ svn+svn://vcs.example/r", whyDirect},
		{"pkg @ bzr+lp:pkg", whyDirect},
		{"pkg @ file:///src/pkg", whyDirect},
		{"pkg @ http://127.0.0.1:9/evil.tar.gz ; python_version >= '3'", whyDirect},
		{"pkg\t@\thttp://127.0.0.1:9/evil.tar.gz", whyDirect},
		{"pkg @ http://127.0.0.1:9/evil.tar.gz --hash=sha256:abcd", whyDirect},
		{"git+https://vcs.example/r.git#egg=pkg", whyVCS},
		{"GIT+SSH://git@vcs.example/r.git", whyVCS},
		{"git://vcs.example/r.git", whyVCS},
		{"hg+http://vcs.example/r#egg=pkg", whyVCS},
		{"svn+https://vcs.example/r/trunk", whyVCS},
		{"bzr+lp:pkg", whyVCS},
		{"https://files.example/pkg-1.0-py3-none-any.whl", whyURL},
		{"http://files.example/pkg-1.0.tar.gz#sha256=abcd", whyURL},
		{"ftp://files.example/pkg.zip", whyURL},
		{"pkg-1.0.tar.gz", whyArchive},
		{"pkg-1.0-py3-none-any.whl", whyArchive},
		{"PKG.ZIP", whyArchive},
		{"pkg.tgz", whyArchive},
		{"pkg-1.0.tar.bz2 ; os_name == 'posix'", whyArchive},
		{".", whyLocal},
		{"./libs/x", whyLocal},
		{"../sibling", whyLocal},
		{"/abs/path", whyLocal},
		{"~/src/x", whyLocal},
		{"libs/x", whyLocal},
		{"libs/x[extra]", whyLocal},
		{`C:\\src\\x`, whyLocal},
		{"file:///src/x", whyLocal},
		{"file:x", whyLocal},
		{"pkg==${VERSION}", whyVariable},
		{"pkg @ ${URL}", whyVariable},
		{"pkg==1.0 --hash=md5:abcd", whyBadHash},
		{"pkg==1.0 --hash=sha256:ab@cd", whyBadHash},
		{"pkg==1.0 --hash sha256", whyBadHash},
		{"pkg ; python_version @ '3'", whyNotPEP508},
		{"pkg ; os_name == 'posix' @ http://x/y", whyNotPEP508},
		{"pkg ; os_name == 'posix", whyNotPEP508},
		{"pkg ;", whyNotPEP508},
		{"pkg#egg=other", whyNotPEP508},
		{"pkg ==", whyNotPEP508},
		{"pkg (>=1", whyNotPEP508},
		{"pkg[extra", whyNotPEP508},
		{"pkg other", whyNotPEP508},
		{"-pkg", "an option"},
		{"_pkg", whyNotPEP508},
	} {
		got, why := requirement(c.in)
		if why == "" {
			t.Errorf("requirement(%q) = %q, taken", c.in, got)
			continue
		}
		if !strings.HasPrefix(why, c.why) {
			t.Errorf("requirement(%q) left out because %q, want %q", c.in, why, c.why)
		}
	}
}

// spellings are requirements every way PEP 508 lets one be written
// without a URL: names, extras, versions, markers (with '@' and ':'
// inside their strings) and hashes, with and without whitespace.
func spellings() []string {
	names := []string{"requests", "Zope.Interface", "typing_extensions", "a", "A1-b_c.d", "pkg.zip2"}
	extras := []string{"", "[security]", "[ a , b ]", "[]"}
	versions := []string{"", ">=2.0", "==1.*", "~=1.4.2", " >= 1.0 , < 2", "(>=1.0,<2)", " ( ==1.0 ) ", "===1.0+local", "!=1.0.0rc1", "<=2!1.0.post1.dev3"}
	markers := []string{
		"",
		`; python_version < "3.12"`,
		` ; sys_platform == 'linux' and platform_release == "5@6"`,
		`;extra=="test"`,
		` ; (os_name=="nt" or os_name == 'posix') and python_full_version >= '3.8.1'`,
		` ; platform_version not in "a@b:c//d"`,
		"\t;\tos.name == 'posix'",
	}
	hashes := []string{"", " --hash=sha256:" + strings.Repeat("ab", 32), " --hash sha384:" + strings.Repeat("0F", 48) + " --hash=sha512:" + strings.Repeat("e", 128)}
	var out []string
	for _, n := range names {
		for _, e := range extras {
			for _, v := range versions {
				for _, m := range markers {
					for _, h := range hashes {
						out = append(out, n+e+v+m+h)
					}
				}
			}
		}
	}
	return out
}

// Every legal spelling is kept, and what redfix writes of it is, to pip's
// own requirement-file parser (Debian's pip), a name from the index with
// no link, and the same name.
func TestRequirementKeepsEverySpellingOfAName(t *testing.T) {
	t.Parallel()
	var kept []string
	for i, s := range spellings() {
		req, why := requirement(s)
		if why != "" {
			t.Fatalf("requirement(%q) left out: %s", s, why)
		}
		// pip reads one in 5 (a second for a thousand lines), each
		// name, extras, versions, marker and hashes among them.
		if i%5 == 0 {
			kept = append(kept, req)
		}
	}
	py, err := Driver{}.interpreter()
	if err == nil {
		err = exec.Command(py, "-I", "-c", "import pip._internal.req.req_file").Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must have Debian's pip (python3-pip): %v", err)
		}
		t.Skipf("no pip to check with: %v", err)
	}
	file := filepath.Join(t.TempDir(), "requirements.txt")
	if err := os.WriteFile(file, []byte(strings.Join(kept, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-I", "-c", pipParse, file).Output()
	if err != nil {
		t.Fatalf("pip's parser: %v", err)
	}
	var parsed []struct {
		Name string `json:"name"`
		Link string `json:"link"`
	}
	if err := json.Unmarshal(out, &parsed); err != nil {
		t.Fatal(err)
	}
	if len(parsed) != len(kept) {
		t.Fatalf("pip read %d requirements of %d", len(parsed), len(kept))
	}
	for i, p := range parsed {
		name := strings.FieldsFunc(kept[i], func(r rune) bool { return strings.ContainsRune("[ <>=!~(;\t", r) })[0]
		if p.Link != "" || p.Name != name {
			t.Errorf("pip reads %q as %q with link %q", kept[i], p.Name, p.Link)
		}
	}
}

// pipParse prints what pip's requirement-file parser makes of a file: each
// requirement's name and link.
const pipParse = `import json, sys
from pip._internal.network.session import PipSession
from pip._internal.req.constructors import install_req_from_parsed_requirement
from pip._internal.req.req_file import parse_requirements
out = []
for parsed in parse_requirements(sys.argv[1], session=PipSession()):
    req = install_req_from_parsed_requirement(parsed)
    out.append({"name": req.name, "link": str(req.link) if req.link else ""})
json.dump(out, sys.stdout)
`

// Whatever requirement is kept is, word by word, a specifier without a
// URL, a path or an option but --hash: inserting a direct reference, a
// URL or an option anywhere in a legal spelling is refused or dropped.
func TestRequirementKeepsNoURLWherever(t *testing.T) {
	t.Parallel()
	all := spellings()
	// Each URL or option (a subtest of its own: the loops are long under
	// -race), at every insertion point of one spelling in 11 (each name,
	// extras, versions, marker and hashes still among them), a digest's
	// inside sampled (insertionPoints).
	for _, bad := range []string{" @ http://127.0.0.1:9/x.tar.gz", "@git+https://h/r.git", " --index-url=http://h/", " -f http://h/", "://"} {
		t.Run(strings.TrimSpace(bad), func(t *testing.T) {
			t.Parallel()
			for k := 0; k < len(all); k += 11 {
				s := all[k]
				for _, i := range insertionPoints(s) {
					in := s[:i] + bad + s[i:]
					req, why := requirement(in)
					if why != "" {
						continue
					}
					if u := unquoted(req); strings.Contains(u, "@") || strings.Contains(u, "://") {
						t.Fatalf("requirement(%q) = %q: a URL kept", in, req)
					}
					for _, f := range strings.Fields(req) {
						if strings.HasPrefix(f, "-") && !strings.HasPrefix(f, "--hash=") {
							t.Fatalf("requirement(%q) = %q: an option kept", in, req)
						}
					}
				}
			}
		})
	}
}

// insertionPoints are the places in s to insert a URL or an option at:
// every one, except inside a hash's digest (a run of more than 16 hex
// digits after a colon), where only the two next to each end and the
// middle are. Every place strictly inside a digest splits it the same
// way, into a shorter digest and hex digits glued to the inserted text,
// whatever the place; the long digests held most of the places, which
// under -race made this the package's longest test by far.
func insertionPoints(s string) []int {
	skip := make([]bool, len(s)+1)
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		j := i + 1
		for j < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
			j++
		}
		if start := i + 1; j-start > 16 {
			for k := start + 3; k <= j-3; k++ {
				skip[k] = k != (start+j)/2
			}
		}
		i = j - 1
	}
	var points []int
	for i := range skip {
		if !skip[i] {
			points = append(points, i)
		}
	}
	return points
}

// unquoted is s without its quoted strings.
func unquoted(s string) string {
	var b strings.Builder
	var q rune
	for _, r := range s {
		switch {
		case q != 0 && r == q:
			q = 0
		case q != 0:
		case r == '"' || r == '\'':
			q = r
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// A requirements file that is a link is not followed out of the checkout.
func TestReadRequirementsRefusesLinks(t *testing.T) {
	t.Parallel()
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

// Whatever a requirement is, what redfix keeps of it has no URL outside a
// marker's strings and no option but --hash.
func FuzzRequirement(f *testing.F) {
	for _, s := range []string{
		"requests>=2", "pkg @ https://h/x.whl", "git+https://h/r.git#egg=x", `pkg ; os_name == "a@b"`,
		"pkg==1 --hash=sha256:abcd", "./x", "pkg[a]@ file:///x", "pkg (>=1) ; extra == 'x'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		req, why := requirement(s)
		if why != "" {
			return
		}
		var spec []string
		for _, w := range strings.Fields(req) {
			switch {
			case strings.HasPrefix(w, "--hash=") && hashOption.MatchString(strings.TrimPrefix(w, "--hash=")):
			case strings.HasPrefix(w, "-"):
				t.Fatalf("requirement(%q) = %q: an option kept", s, req)
			default:
				spec = append(spec, w)
			}
		}
		if u := unquoted(strings.Join(spec, " ")); strings.ContainsAny(u, `@:/\`) {
			t.Fatalf("requirement(%q) = %q: a URL or path kept", s, req)
		}
	})
}

// Requirements of pyproject.toml and setup.cfg are held to the same rule,
// and each left out says the file and the table it is from.
func TestProbedRequirementsNameWhereTheyAreFrom(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	dir := repo(t, map[string]string{
		"pyproject.toml": `[project]
name = "app"
dependencies = ["evil @ git+https://vcs.example/evil.git"]

[project.optional-dependencies]
test = ["https://files.example/evil-1.0-py3-none-any.whl"]

[dependency-groups]
tests = ["evil-2.0.tar.gz"]
`,
		"setup.cfg": `[metadata]
name = app

[options]
install_requires =
    other @ http://127.0.0.1:9/other.tar.gz

[options.extras_require]
testing =
    hg+https://vcs.example/x#egg=x
`,
	})
	env, err := d.prepare(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, note := range []string{
		`pyproject.toml [project] dependencies: "evil @ git+https://vcs.example/evil.git" left out: ` + whyDirect,
		`pyproject.toml [project.optional-dependencies] test: "https://files.example/evil-1.0-py3-none-any.whl" left out: ` + whyURL,
		`pyproject.toml [dependency-groups] tests: "evil-2.0.tar.gz" left out: ` + whyArchive,
		`setup.cfg [options] install_requires: "other @ http://127.0.0.1:9/other.tar.gz" left out: ` + whyDirect,
		`setup.cfg [options.extras_require] testing: "hg+https://vcs.example/x#egg=x" left out: ` + whyVCS,
	} {
		if !contains(env.notes, note) {
			t.Errorf("no note says %s\nnotes: %q", note, env.notes)
		}
	}
	if base, _ := d.interpreter(); env.python != base {
		t.Errorf("an environment was made of requirements all left out: %s", env.python)
	}
}
