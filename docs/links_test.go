// Package docs holds redfix's documentation and a test that keeps it
// navigable: every relative link of the README and of the pages in docs/
// leads to a file of the repository (and, with an anchor, to a heading of
// it), every page is reachable from the README, and the README stays a
// short door rather than the manual.
package docs

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// maxReadmeLines bounds the README: the manual lives in docs/.
const maxReadmeLines = 200

// registryDomains are package registries' domains, which the README does
// not name: how the tests get their dependencies is CI's business
// (.ci/run).
var registryDomains = []string{
	"npmjs.com", "npmjs.org", "pkg.go.dev", "proxy.golang.org", "sum.golang.org",
	"pypi.org", "crates.io", "rubygems.org", "docker.io", "hub.docker.com",
}

// hostName is a word that looks like a host name.
var hostName = regexp.MustCompile(`[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)+`)

// TestDocumentation checks the repository's own README.md and docs/*.md.
func TestDocumentation(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range check(t, root) {
		t.Error(p)
	}
}

// TestCheckCatchesBrokenDocumentation shows that each rule fails on a tree
// that breaks it, and stays quiet on what is allowed.
func TestCheckCatchesBrokenDocumentation(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n")
	write("cmd/bot/main.go", "package main\n")
	write("README.md", strings.Join([]string{
		"# m",
		"[ok](docs/a.md) [ok anchor](docs/a.md#the-gates) [ok dir](cmd/bot) [ok file](go.mod)",
		"[ok self](#m) [ok root-relative](/docs/a.md) ![ok image](docs/a.md \"title\")",
		"[external](https://example.com/x) [mail](mailto:a@example.com)",
		"[missing](docs/missing.md) [bad anchor](docs/a.md#no-such-heading)",
		"[outside](../elsewhere.md) [bad self](#nowhere)",
		"See https://registry.npmjs.org/left-pad for it.",
		"`[in a code span](docs/none.md)`",
		"```",
		"[in a code block](docs/none.md)",
		"```",
		"[ref]: docs/gone.md",
	}, "\n")+strings.Repeat("\nfiller", maxReadmeLines))
	write("docs/a.md", "# A\n\n## The gates\n\n[back](../README.md) [sibling](b.md#b) [gone](c.md)\n")
	write("docs/b.md", "# B\n\n[up and out](../../outside.md)\n")
	write("docs/unlinked.md", "# Unlinked\n")

	got := check(t, root)
	want := []string{
		"README.md: 212 lines, more than 200: the manual goes to docs/",
		"README.md: names the package registry registry.npmjs.org",
		"README.md:5: link docs/missing.md: no such file",
		"README.md:5: link docs/a.md#no-such-heading: no heading \"no-such-heading\" in docs/a.md",
		"README.md:6: link ../elsewhere.md: leaves the repository",
		"README.md:6: link #nowhere: no heading \"nowhere\" in README.md",
		"README.md:12: link docs/gone.md: no such file",
		"README.md: does not link docs/b.md",
		"README.md: does not link docs/unlinked.md",
		"docs/a.md:5: link c.md: no such file",
		"docs/b.md:3: link ../../outside.md: leaves the repository",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestSlug pins the anchors GitHub makes of headings.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"The gates":                                  "the-gates",
		"`worker judge-eval`":                        "worker-judge-eval",
		"1. The repository's code runs confined":     "1-the-repositorys-code-runs-confined",
		"Secrets in files (`_FILE`)":                 "secrets-in-files-_file",
		"Land rate — landed ÷ decided":               "land-rate--landed--decided",
		"[Parked messages](operations.md), on call":  "parked-messages-on-call",
		"Who may use the API?":                       "who-may-use-the-api",
		"**Bold** and *emphasis*":                    "bold-and-emphasis",
		"Ingest-and-triage throughput":               "ingest-and-triage-throughput",
		"Mined tasks and bench on pflag, 2026-11-23": "mined-tasks-and-bench-on-pflag-2026-11-23",
		"bot bench-bisect":                           "bot-bench-bisect",
		"Keys not in the sample file":                "keys-not-in-the-sample-file",
		"Nothing accepted is lost":                   "nothing-accepted-is-lost",
		"What the bot does with GitHub's events":     "what-the-bot-does-with-githubs-events",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
	anchors := headingAnchors("# A\n## A\n```\n# not a heading\n```\n## A #\n")
	for _, a := range []string{"a", "a-1", "a-2"} {
		if !anchors[a] {
			t.Errorf("anchors %v lack %q", anchors, a)
		}
	}
	if anchors["not-a-heading"] {
		t.Errorf("a heading inside a code block made an anchor: %v", anchors)
	}
}

// check returns the problems of the documentation under root: README.md and
// docs/*.md.
func check(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, "docs/"+filepath.Base(p))
	}
	texts := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		texts[f] = string(data)
	}

	var problems []string
	readme := texts["README.md"]
	if n := strings.Count(strings.TrimRight(readme, "\n"), "\n") + 1; n > maxReadmeLines {
		problems = append(problems, fmt.Sprintf("README.md: %d lines, more than %d: the manual goes to docs/", n, maxReadmeLines))
	}
	named := map[string]bool{}
	for _, h := range hostName.FindAllString(strings.ToLower(readme), -1) {
		for _, d := range registryDomains {
			if (h == d || strings.HasSuffix(h, "."+d)) && !named[h] {
				named[h] = true
				problems = append(problems, "README.md: names the package registry "+h)
			}
		}
	}

	linked := map[string]bool{}
	for _, f := range files {
		for _, l := range links(texts[f]) {
			target, ok, problem := resolve(root, f, l.target, texts)
			if problem != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: link %s: %s", f, l.line, l.target, problem))
			}
			if ok && f == "README.md" {
				linked[target] = true
			}
		}
	}
	for _, f := range files[1:] {
		if !linked[f] {
			problems = append(problems, "README.md: does not link "+f)
		}
	}
	return problems
}

// resolve checks one link of file: target is the repository-relative path
// it leads to when it is a relative link that resolves (ok), and problem
// says what is wrong with it ("" when nothing is).
func resolve(root, file, raw string, texts map[string]string) (target string, ok bool, problem string) {
	if scheme.MatchString(raw) || strings.HasPrefix(raw, "//") {
		return "", false, "" // another site's; not checked
	}
	pathPart, anchor, _ := strings.Cut(raw, "#")
	p, err := url.PathUnescape(pathPart)
	if err != nil {
		return "", false, "not a valid path: " + err.Error()
	}
	switch {
	case p == "":
		target = file
	case strings.HasPrefix(p, "/"):
		target = filepath.ToSlash(filepath.Clean(strings.TrimPrefix(p, "/")))
	default:
		target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(filepath.FromSlash(file)), filepath.FromSlash(p))))
	}
	if target == ".." || strings.HasPrefix(target, "../") {
		return "", false, "leaves the repository"
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
		return "", false, "no such file"
	}
	if anchor == "" || !strings.HasSuffix(target, ".md") {
		return target, true, ""
	}
	text, loaded := texts[target]
	if !loaded {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(target)))
		if err != nil {
			return "", false, err.Error()
		}
		text = string(data)
	}
	if !headingAnchors(text)[strings.ToLower(anchor)] {
		return target, true, fmt.Sprintf("no heading %q in %s", anchor, target)
	}
	return target, true, ""
}

var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

type link struct {
	line   int
	target string
}

var (
	// An inline link or image: [text](target "title"), the text holding at
	// most one level of brackets.
	inlineLink = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)`)
	// A link reference definition: [label]: target
	refDef = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	fence  = regexp.MustCompile("^ {0,3}(```|~~~)")
	// An HTML anchor a page may set by hand.
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// links are the link targets of a Markdown text, outside code blocks and
// code spans.
func links(text string) []link {
	var out []link
	inFence := false
	for i, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = stripCodeSpans(line)
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, link{line: i + 1, target: strings.Trim(m[1], "<>")})
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{line: i + 1, target: strings.Trim(m[1], "<>")})
		}
	}
	return out
}

// stripCodeSpans blanks the code spans of a line: a run of backticks up to
// the next run of the same length.
func stripCodeSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		run := strings.Repeat("`", n)
		end := strings.Index(line[i+n:], run)
		if end < 0 {
			b.WriteString(run)
			i += n
			continue
		}
		i += n + end + n
	}
	return b.String()
}

var atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)

// headingAnchors are the anchors GitHub gives the headings of a Markdown
// text (a repeated heading's get -1, -2, …), and those set with <a name>.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[strings.ToLower(m[1])] = true
		}
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}

var (
	mdLink  = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)`)
	htmlTag = regexp.MustCompile(`<[^>]+>`)
)

// slug is GitHub's anchor for a heading: its text as rendered, in lower
// case, with spaces made hyphens and everything but letters, digits,
// marks, hyphens and underscores left out.
func slug(heading string) string {
	text := mdLink.ReplaceAllString(heading, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	text = strings.NewReplacer("`", "", "*", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestCIRunsTheREADMEsTestCommand: .ci/run runs, on a line of its own,
// exactly the command the README gives for the whole test suite.
func TestCIRunsTheREADMEsTestCommand(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join("..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var command string
	for _, l := range strings.Split(string(readme), "\n") {
		if cmd, ok := strings.CutSuffix(l, "# the whole test suite"); ok {
			command = strings.TrimSpace(cmd)
		}
	}
	if command == "" {
		t.Fatal(`the README gives no command marked "# the whole test suite"`)
	}
	for _, l := range strings.Split(string(ci), "\n") {
		if strings.TrimSpace(l) == command {
			return
		}
	}
	t.Errorf(".ci/run does not run the README's test command %q on a line of its own", command)
}
