package publish

import (
	"regexp"
	"strings"
)

// CodeOwners is a parsed CODEOWNERS file: for a path, the owners of the
// last rule that matches it, as GitHub reads the file.
type CodeOwners struct {
	rules []ownerRule
}

type ownerRule struct {
	re     *regexp.Regexp
	owners []string
}

// ParseCodeOwners reads a CODEOWNERS file. Lines it cannot read are
// skipped, as GitHub does.
func ParseCodeOwners(data string) CodeOwners {
	var co CodeOwners
	for _, line := range strings.Split(data, "\n") {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		re, err := ownerPattern(f[0])
		if err != nil {
			continue
		}
		co.rules = append(co.rules, ownerRule{re: re, owners: f[1:]})
	}
	return co
}

// Owners are the owners of path (slash-separated, relative to the
// repository's root): "@user", "@org/team" or an e-mail address.
func (co CodeOwners) Owners(path string) []string {
	path = strings.TrimPrefix(path, "/")
	for i := len(co.rules) - 1; i >= 0; i-- {
		if co.rules[i].re.MatchString(path) {
			return co.rules[i].owners
		}
	}
	return nil
}

// ownerPattern turns a gitignore-style pattern into a regular expression
// over paths: a pattern with a slash before its end is anchored at the
// root, one without matches at any depth; a directory matches everything
// under it; "*" stays within a directory, "**" crosses them.
func ownerPattern(p string) (*regexp.Regexp, error) {
	anchored := strings.Contains(strings.TrimSuffix(p, "/"), "/")
	p = strings.TrimPrefix(p, "/")
	dirOnly := strings.HasSuffix(p, "/")
	p = strings.TrimSuffix(p, "/")
	var b strings.Builder
	b.WriteString("^")
	if !anchored {
		b.WriteString("(?:.*/)?")
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			if i+1 < len(p) && p[i+1] == '*' {
				i++
				if i+1 < len(p) && p[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if dirOnly {
		b.WriteString("/.*$")
	} else {
		b.WriteString("(?:/.*)?$")
	}
	return regexp.Compile(b.String())
}
