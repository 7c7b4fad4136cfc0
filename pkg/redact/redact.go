// Package redact removes credentials from text before the outside world can
// read it: redfix's own secret values (exactly, and base64-encoded as in a
// basic-auth header) and the shapes of common credentials (cloud keys,
// tokens, private keys, passwords in URLs and assignments).
//
// A nil *Redactor redacts nothing, so that code without one runs unchanged.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Mark replaces what was redacted.
const Mark = "[REDACTED]"

// minSecret is the shortest own value redacted: shorter ones would erase
// ordinary words (a password "abc" is weak, not a reason to lose text).
const minSecret = 6

// pattern is one credential shape. When the expression has a group named
// "v", only that part is replaced; otherwise the whole match is. check,
// when set, must accept the replaced part (to spare ordinary words).
type pattern struct {
	name  string
	re    *regexp.Regexp
	check func(string) bool
}

var patterns = []pattern{
	{name: "private key", re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?s:.*?)(-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)`)},
	{name: "aws access key", re: regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{name: "aws secret key", re: regexp.MustCompile(`(?i)aws_?(?:secret_?access_?key|secret_?key|secret)["']?\s*[:=]\s*["']?(?P<v>[A-Za-z0-9/+=]{40})\b`)},
	{name: "github token", re: regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b`)},
	{name: "github fine-grained token", re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,255}\b`)},
	{name: "anthropic or openai key", re: regexp.MustCompile(`\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), check: mixed},
	{name: "slack token", re: regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}`)},
	{name: "slack webhook", re: regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+`)},
	{name: "google api key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{name: "jwt", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{name: "authorization header", re: regexp.MustCompile(`(?i)\b(?:authorization|proxy-authorization)["']?\s*[:=]\s*["']?(?:bearer|basic|token|bot)\s+(?P<v>[A-Za-z0-9._~+/=-]{8,})`)},
	{name: "bearer token", re: regexp.MustCompile(`(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)`), check: mixed},
	{name: "password in url", re: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"]+:(?P<v>[^/\s@'"]+)@`)},
	// KEY=value as in environment files and shell: the key names a secret.
	{name: "secret assignment", re: regexp.MustCompile(`\b[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)[A-Z0-9_]*=(?P<v>[^\s'"]{6,})`), check: notPlaceholder},
	// password = "value" or password: 'value' in code and configuration.
	{name: "quoted secret", re: regexp.MustCompile(`(?i)\b[a-z0-9_.-]*(?:password|passwd|secret|token|api_?key|apikey|access_?key|private_?key|client_?secret)["']?\s*(?::=|[:=])\s*["'](?P<v>[^"'\s]{6,})["']`), check: notPlaceholder},
	// password=value in query strings and connection strings.
	{name: "password parameter", re: regexp.MustCompile(`(?i)\b(?:password|passwd|pwd)=(?P<v>[^\s&;'"]{4,})`), check: notPlaceholder},
}

// mixed accepts a token with a digit and a letter: real keys have both,
// words in prose do not.
func mixed(s string) bool {
	return strings.ContainsFunc(s, unicode.IsDigit) && strings.ContainsFunc(s, unicode.IsLetter)
}

// notPlaceholder spares values that refer to a secret instead of being
// one: ${VAR}, $VAR, <token>, ***, already redacted.
func notPlaceholder(s string) bool {
	return !strings.HasPrefix(s, "$") && !strings.HasPrefix(s, "<") && !strings.HasPrefix(s, "*") &&
		!strings.HasPrefix(s, "{{") && !strings.Contains(s, Mark) && !strings.Contains(s, "REDACTED")
}

// Redactor removes secrets from text.
type Redactor struct {
	values *strings.Replacer // nil when there are none
}

// New is a Redactor for the secret values (empty and too-short ones are
// ignored) and every credential pattern.
func New(secrets ...string) *Redactor {
	var vals []string
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) < minSecret {
			continue
		}
		vals = append(vals, s, base64.StdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s)))
	}
	// Longest first, so that a secret containing another goes whole.
	slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) })
	vals = slices.Compact(vals)
	r := &Redactor{}
	if len(vals) > 0 {
		var pairs []string
		for _, v := range vals {
			pairs = append(pairs, v, Mark)
		}
		r.values = strings.NewReplacer(pairs...)
	}
	return r
}

// Values removes only redfix's own secret values: for text whose every
// other byte must survive (a patch that must still apply).
func (r *Redactor) Values(s string) string {
	if r == nil || r.values == nil {
		return s
	}
	return r.values.Replace(s)
}

// String removes the secret values and every credential pattern.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	s = r.Values(s)
	for _, p := range patterns {
		s = p.replace(s)
	}
	return s
}

// Bytes is String for bytes.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	return []byte(r.String(string(b)))
}

func (p pattern) replace(s string) string {
	v := p.re.SubexpIndex("v")
	locs := p.re.FindAllStringSubmatchIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range locs {
		start, end := m[0], m[1]
		if v >= 0 {
			start, end = m[2*v], m[2*v+1]
			if start < 0 {
				continue
			}
		}
		if p.check != nil && !p.check(s[start:end]) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(Mark)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// JSON redacts every string in a JSON document, keys kept, and returns it
// re-encoded; text that is not JSON is redacted as text.
func (r *Redactor) JSON(data []byte) []byte {
	if r == nil {
		return data
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return r.Bytes(data)
	}
	out, err := json.Marshal(r.walk(v))
	if err != nil {
		return r.Bytes(data)
	}
	return out
}

func (r *Redactor) walk(v any) any {
	switch x := v.(type) {
	case string:
		return r.String(x)
	case []any:
		for i := range x {
			x[i] = r.walk(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = r.walk(x[k])
		}
	}
	return v
}

// Value redacts every string reachable in *v, a value that JSON encodes and
// decodes (a task, a pull request): it goes through JSON and back.
func Value[T any](r *Redactor, v T) (T, error) {
	if r == nil {
		return v, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return v, err
	}
	var out T
	if err := json.Unmarshal(r.JSON(data), &out); err != nil {
		return v, err
	}
	return out, nil
}

// JSONLines redacts a JSON-lines document (a trajectory) line by line:
// lines with nothing to redact are kept byte for byte, the others are
// re-encoded with their strings redacted, so that every line stays JSON.
func (r *Redactor) JSONLines(data []byte) []byte {
	if r == nil {
		return data
	}
	lines := strings.SplitAfter(string(data), "\n")
	var b strings.Builder
	for _, line := range lines {
		body := strings.TrimSuffix(line, "\n")
		if r.String(body) == body {
			b.WriteString(line)
			continue
		}
		b.Write(r.JSON([]byte(body)))
		if strings.HasSuffix(line, "\n") {
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}
