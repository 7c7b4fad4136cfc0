package repourl

import (
	"fmt"
	"regexp"
	"strings"
)

// Allowlist matches canonical repository locations against patterns. A
// pattern is itself canonicalized (so "https://GitHub.com/org/*" works) and
// may hold "*", any run of characters without a "/", and "**", any run of
// characters. The empty allowlist allows nothing.
type Allowlist struct {
	patterns []string
	res      []*regexp.Regexp
}

// NewAllowlist compiles patterns; an error names every pattern that is not
// a repository location.
func NewAllowlist(patterns ...string) (*Allowlist, error) {
	a := &Allowlist{}
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		canon, err := canonicalPattern(p)
		if err != nil {
			return nil, fmt.Errorf("allowlist pattern %q: %w", p, err)
		}
		var b strings.Builder
		b.WriteString("^")
		for i := 0; i < len(canon); i++ {
			switch {
			case strings.HasPrefix(canon[i:], "**"):
				b.WriteString(".*")
				i++
			case canon[i] == '*':
				b.WriteString("[^/]*")
			default:
				b.WriteString(regexp.QuoteMeta(canon[i : i+1]))
			}
		}
		b.WriteString("$")
		a.patterns = append(a.patterns, canon)
		a.res = append(a.res, regexp.MustCompile(b.String()))
	}
	return a, nil
}

// canonicalPattern canonicalizes the pattern's literal part, keeping its
// stars.
func canonicalPattern(p string) (string, error) {
	if !strings.Contains(p, "*") {
		return Canonical(p)
	}
	// Canonicalize with the stars replaced by a placeholder path segment
	// that survives cleaning, then put them back.
	marked := strings.ReplaceAll(p, "*", "zzstarzz")
	c, err := Canonical(marked)
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(c, "zzstarzz", "*"), nil
}

// Allows reports whether the canonical location matches a pattern.
func (a *Allowlist) Allows(canonical string) bool {
	if a == nil {
		return false
	}
	for _, re := range a.res {
		if re.MatchString(canonical) {
			return true
		}
	}
	return false
}

// Patterns are the canonical patterns, for logs and errors.
func (a *Allowlist) Patterns() []string {
	if a == nil {
		return nil
	}
	return append([]string(nil), a.patterns...)
}

// Empty reports whether the allowlist allows nothing.
func (a *Allowlist) Empty() bool { return a == nil || len(a.res) == 0 }
