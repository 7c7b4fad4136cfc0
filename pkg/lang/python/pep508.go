package python

import (
	"regexp"
	"strings"
)

// Why a requirement is left out. Each says what the text is and why redfix
// does not pass it to pip; the notes of setup quote them.
const (
	whyLocal     = "a local path (the checkout's own code is imported from the checkout)"
	whyDirect    = "a direct reference (NAME @ URL), which pip would fetch from there and build: dependencies come from the configured index"
	whyVCS       = "a version-control URL, which pip would clone and build: dependencies come from the configured index"
	whyURL       = "a URL, not a name: dependencies come from the configured index"
	whyArchive   = "an archive file, not a name: dependencies come from the configured index"
	whyVariable  = "it names an environment variable (${...}), which pip would expand"
	whyBadHash   = "a --hash that is not sha256, sha384 or sha512 and hexadecimal digits"
	whyNotPEP508 = "not a requirement of the form NAME[EXTRAS] VERSIONS ; MARKER"
)

// refusal says why the specifier of a requirement (its words before any
// option) is not a plain name from the index, "" when it is one: a PEP 508
// name with optional extras, version specifiers and environment marker,
// and nothing else. Whatever else pip would take there (a direct
// reference, a URL, a version-control URL, a path, an archive) is refused
// with its kind.
func refusal(spec string) string {
	if strings.Contains(spec, "${") {
		return whyVariable
	}
	p := &reqParser{s: spec}
	name := p.name()
	if name != "" {
		p.space()
		if p.peek() == '[' && !p.extras() {
			return whyNotPEP508 + ": unclosed or malformed extras"
		}
		p.space()
		if p.peek() == '@' {
			return whyDirect
		}
	}
	if name == "" || !p.plain() {
		if why := notAName(spec); why != "" {
			return why
		}
	}
	if name == "" {
		return whyNotPEP508 + ": it does not start with a name"
	}
	if why := p.rest(); why != "" {
		return whyNotPEP508 + ": " + why
	}
	if !p.versioned && isArchive(name) {
		return whyArchive
	}
	return ""
}

// plain reports that what follows the name and extras is what a
// requirement may have there: versions, a marker, or nothing.
func (p *reqParser) plain() bool {
	switch c := p.peek(); {
	case c == 0, c == ';', c == '(', c == ',':
		return true
	default:
		return strings.IndexByte("<>=!~", c) >= 0
	}
}

// scheme is a URL's scheme at the start of a text ("git+https:", "file:").
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// notAName classifies a specifier that does not start with a plain
// requirement: a path, a URL, a version-control URL; "" when it is none of
// those.
func notAName(spec string) string {
	lower := strings.ToLower(spec)
	if m := scheme.FindString(lower); m != "" && (len(m) > 2 || strings.Contains(lower, "://")) {
		s := strings.TrimSuffix(m, ":")
		switch {
		case s == "file":
			return whyLocal
		case s == "git" || strings.HasPrefix(s, "git+") || strings.HasPrefix(s, "hg+") || strings.HasPrefix(s, "svn+") || strings.HasPrefix(s, "bzr+"):
			return whyVCS
		default:
			return whyURL
		}
	}
	if strings.Contains(lower, "://") {
		return whyURL
	}
	if strings.HasPrefix(spec, ".") || strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, "~") || strings.ContainsAny(spec, `/\`) {
		return whyLocal
	}
	if isArchive(strings.Fields(spec)[0]) {
		return whyArchive
	}
	return ""
}

// archiveExts are the endings pip takes for a file to install rather
// than a name.
var archiveExts = []string{".whl", ".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".tlz", ".tar.lz", ".tar.lzma"}

// isArchive reports a name pip would take for an archive file.
func isArchive(name string) bool {
	name = strings.ToLower(name)
	for _, ext := range archiveExts {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// reqParser reads a PEP 508 requirement without a URL.
type reqParser struct {
	s         string
	i         int
	versioned bool
}

func (p *reqParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *reqParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// name reads a name: letters and digits, with '.', '-' and '_' inside.
func (p *reqParser) name() string {
	start := p.i
	for p.i < len(p.s) && (isAlnum(p.s[p.i]) || strings.IndexByte("._-", p.s[p.i]) >= 0) {
		p.i++
	}
	n := p.s[start:p.i]
	if n == "" || !isAlnum(n[0]) || !isAlnum(n[len(n)-1]) {
		p.i = start
		return ""
	}
	return n
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// extras reads "[a, b]" (or "[]").
func (p *reqParser) extras() bool {
	p.i++ // [
	p.space()
	if p.peek() == ']' {
		p.i++
		return true
	}
	for {
		p.space()
		if p.name() == "" {
			return false
		}
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return true
		default:
			return false
		}
	}
}

// rest reads what follows the name and extras: version specifiers (in
// parentheses or not) and a marker; it says what is wrong, "" when
// nothing is.
func (p *reqParser) rest() string {
	p.space()
	if p.peek() == '(' {
		p.i++
		if why := p.versions(); why != "" {
			return why
		}
		p.space()
		if p.peek() != ')' {
			return "unclosed parenthesis"
		}
		p.i++
	} else if p.peek() != ';' && p.peek() != 0 {
		if why := p.versions(); why != "" {
			return why
		}
	}
	p.space()
	switch p.peek() {
	case 0:
		return ""
	case ';':
		p.i++
		return marker(p.s[p.i:])
	}
	return "unexpected " + quoteRune(p.s[p.i:])
}

// versionOps are the comparison operators, longest first.
var versionOps = []string{"===", "~=", "==", "!=", "<=", ">=", "<", ">"}

// versions reads a comma-separated list of version specifiers.
func (p *reqParser) versions() string {
	for {
		p.space()
		op := ""
		for _, o := range versionOps {
			if strings.HasPrefix(p.s[p.i:], o) {
				op = o
				break
			}
		}
		if op == "" {
			return "a version specifier must start with one of " + strings.Join(versionOps, " ") + ", not " + quoteRune(p.s[p.i:])
		}
		p.i += len(op)
		p.space()
		start := p.i
		for p.i < len(p.s) && (isAlnum(p.s[p.i]) || strings.IndexByte(".*+!-_", p.s[p.i]) >= 0) {
			p.i++
		}
		if p.i == start {
			return "no version after " + op
		}
		p.versioned = true
		p.space()
		if p.peek() != ',' {
			return ""
		}
		p.i++
	}
}

// marker checks an environment marker token by token: words (a
// variable, a keyword: os_name, platform.machine, and, not, in), quoted
// strings, comparison operators and parentheses, nothing else. An '@'
// inside a quoted string is a string's; outside one it is refused.
func marker(m string) string {
	if strings.TrimSpace(m) == "" {
		return "an empty marker after ';'"
	}
	for i := 0; i < len(m); {
		c := m[i]
		switch {
		case c == ' ' || c == '\t' || c == '(' || c == ')':
			i++
		case c == '"' || c == '\'':
			end := strings.IndexByte(m[i+1:], c)
			if end < 0 {
				return "an unclosed string in the marker"
			}
			i += end + 2
		case c == '_' || isAlnum(c) && !(c >= '0' && c <= '9'):
			for i < len(m) && (isAlnum(m[i]) || m[i] == '_' || m[i] == '.') {
				i++
			}
		default:
			op := ""
			for _, o := range versionOps {
				if strings.HasPrefix(m[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return "unexpected " + quoteRune(m[i:]) + " in the marker"
			}
			i += len(op)
		}
	}
	return ""
}

// quoteRune quotes the first character of s.
func quoteRune(s string) string {
	for _, r := range s {
		return "'" + string(r) + "'"
	}
	return "the end"
}

// hashOption is a --hash value pip takes: a strong algorithm and a hex
// digest.
var hashOption = regexp.MustCompile(`^(sha256|sha384|sha512):[0-9a-fA-F]+$`)
