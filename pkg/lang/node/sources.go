package node

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
)

// A lockfile's packages must all come from the registry setup installs
// from: a tarball URL elsewhere, a git repository, a file or link outside
// the checkout's own workspace packages is code of the repository's
// choosing fetched with the network (a git dependency's prepare script
// runs, whatever --ignore-scripts says). checkSources finds them before
// any install runs; the setup error names each.

// registry is the registry setup installs from, as a URL prefix: its
// scheme, its host (port included) and its path, which ends with "/".
type registry struct {
	scheme, host, path string
	raw                string
}

// parseRegistry reads a registry URL: a scheme and a host, and a path when
// the registry is served under one (a repository manager's remote).
func parseRegistry(s string) (registry, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return registry{}, fmt.Errorf("registry %q: %w", s, err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return registry{}, fmt.Errorf("registry %q: want an http or https URL with a host, and no credentials, query or fragment", s)
	}
	p := u.Path
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	r := registry{scheme: u.Scheme, host: normalHost(u), path: p}
	r.raw = r.scheme + "://" + u.Host + p
	return r, nil
}

// normalHost is a URL's host and port, lower case, without the scheme's
// default port.
func normalHost(u *url.URL) string {
	h := strings.ToLower(u.Host)
	switch {
	case u.Scheme == "https" && strings.HasSuffix(h, ":443"):
		h = strings.TrimSuffix(h, ":443")
	case u.Scheme == "http" && strings.HasSuffix(h, ":80"):
		h = strings.TrimSuffix(h, ":80")
	}
	return h
}

// String is the registry's URL.
func (r registry) String() string { return r.raw }

// holds reports a URL of the registry: its scheme, its host, and its path
// under the registry's. A URL that a package manager could read otherwise
// than Go does (backslashes, whitespace or control characters, a user,
// an escaped host, dot segments) is not one.
func (r registry) holds(raw string) bool {
	for _, c := range raw {
		if c <= ' ' || c == 0x7f || c == '\\' {
			return false
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || strings.Contains(u.Host, "%") {
		return false
	}
	if !strings.EqualFold(u.Scheme, r.scheme) || normalHost(u) != r.host || !strings.HasPrefix(u.Path, r.path) {
		return false
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	for _, seg := range strings.Split(strings.ToLower(u.EscapedPath()), "/") {
		if strings.Contains(seg, "%2e") || strings.Contains(seg, "%2f") || strings.Contains(seg, "%5c") {
			return false
		}
	}
	return true
}

// refused is a package whose source is not the registry.
type refused struct {
	pkg, source, why string
}

// Why a source is refused.
const (
	whyOutside  = "a tarball outside the registry"
	whyGit      = "a git repository"
	whyLocal    = "a file or link outside the checkout's workspace packages"
	whyProtocol = "a protocol that does not install from the registry"
)

// sourceCheck gathers what a lockfile takes from elsewhere than the
// registry.
type sourceCheck struct {
	reg        registry
	workspaces []string // the checkout's workspace patterns
	refused    []refused
}

// refuse records a package refused, once.
func (c *sourceCheck) refuse(pkg, source, why string) {
	if !slices.Contains(c.refused, refused{pkg, source, why}) {
		c.refused = append(c.refused, refused{pkg, source, why})
	}
}

// refusedSource reports a source already refused, for whatever package.
func (c *sourceCheck) refusedSource(source string) bool {
	return slices.ContainsFunc(c.refused, func(r refused) bool { return r.source == source })
}

// spec checks a dependency's spec (of package.json, of a lockfile's
// entry): a version, range or tag is the registry's; so is npm:name@range,
// and a workspace: or catalog: spec, which resolve within the checkout's
// workspaces or to a range. base is the directory (relative to the
// checkout's root) a file: or link: path is relative to.
func (c *sourceCheck) spec(pkg, spec, base string) {
	s := strings.TrimSpace(spec)
	lower := strings.ToLower(s)
	proto, _, hasProto := strings.Cut(lower, ":")
	if hasProto && strings.ContainsAny(proto, "/@ ") {
		hasProto = false
	}
	switch {
	case strings.HasPrefix(lower, "npm:"):
		// npm:name@range, the name perhaps scoped (@scope/name).
		if alias := s[len("npm:"):]; len(alias) > 1 {
			if _, r, ok := strings.Cut(alias[1:], "@"); ok {
				c.spec(pkg, r, base)
			}
		}
	case strings.HasPrefix(lower, "workspace:"), strings.HasPrefix(lower, "catalog:"):
	case strings.HasPrefix(lower, "file:"), strings.HasPrefix(lower, "link:"), strings.HasPrefix(lower, "portal:"):
		c.local(pkg, s, base, s[len(proto)+1:])
	case strings.HasPrefix(lower, "http:"), strings.HasPrefix(lower, "https:"):
		c.url(pkg, s)
	case isGit(lower):
		c.refuse(pkg, s, whyGit)
	case hasProto:
		c.refuse(pkg, s, whyProtocol)
	case strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~"):
		c.local(pkg, s, base, s)
	case strings.Contains(s, "/"):
		// owner/repo: a GitHub repository.
		c.refuse(pkg, s, whyGit)
	}
}

// isGit reports a git spec or URL (lower case).
func isGit(s string) bool {
	for _, p := range []string{"git+", "git:", "git@", "ssh:", "github:", "gitlab:", "bitbucket:", "gist:"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// resolved checks where a lockfile says a package comes from: a URL of the
// registry, or a path (relative to the checkout's root) of one of its
// workspace packages when the entry is a link.
func (c *sourceCheck) resolved(pkg, source string, link bool) {
	if source == "" {
		return
	}
	lower := strings.ToLower(source)
	switch {
	case link && !strings.Contains(lower, ":"):
		c.local(pkg, source, ".", source)
	case strings.HasPrefix(lower, "http:"), strings.HasPrefix(lower, "https:"):
		c.url(pkg, source)
	default:
		c.spec(pkg, source, ".")
	}
}

// url checks an http or https URL: the registry's, or refused as a git
// repository (a path ending in .git) or a tarball elsewhere.
func (c *sourceCheck) url(pkg, u string) {
	switch base, _, _ := strings.Cut(u, "#"); {
	case c.reg.holds(u):
	case strings.HasSuffix(strings.ToLower(base), ".git"):
		c.refuse(pkg, u, whyGit)
	default:
		c.refuse(pkg, u, whyOutside)
	}
}

// local checks a local package at p, relative to base (a directory
// relative to the checkout's root): it must be one of the checkout's
// workspace packages.
func (c *sourceCheck) local(pkg, source, base, p string) {
	if path.IsAbs(p) || strings.HasPrefix(p, "~") || strings.Contains(p, `\`) || !c.workspace(path.Join(base, p)) {
		c.refuse(pkg, source, whyLocal)
	}
}

// workspace reports a directory (relative to the checkout's root) inside
// the checkout that a workspace pattern names.
func (c *sourceCheck) workspace(rel string) bool {
	rel = path.Clean(strings.TrimPrefix(rel, "./"))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) || strings.Contains(rel, `\`) {
		return false
	}
	in := false
	for _, p := range c.workspaces {
		neg := strings.HasPrefix(p, "!")
		if globMatch(strings.TrimPrefix(strings.TrimPrefix(p, "!"), "./"), rel) {
			in = !neg
		}
	}
	return in
}

// globMatch matches a slash path against a workspace pattern: path.Match
// for each segment, "**" for any number of them.
func globMatch(pattern, name string) bool {
	pattern = strings.TrimSuffix(path.Clean(pattern), "/")
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// workspacePatterns are the workspace patterns of a package.json's
// "workspaces": a list, or an object with a "packages" list.
func workspacePatterns(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		if json.Unmarshal(obj["packages"], &list) == nil {
			return list
		}
	}
	return nil
}

// manifestFields are the fields of package.json whose specs are checked:
// the dependencies, and the overrides that replace specs deeper down.
var manifestFields = []string{"dependencies", "devDependencies", "optionalDependencies", "peerDependencies", "overrides", "resolutions"}

// manifest checks package.json: its dependencies' and overrides' specs,
// and a packageManager that names anything but a manager and its version
// (corepack would fetch and run what a URL there names). Keys are read as
// written: JSON's case-insensitive field matching is not used, so that no
// second spelling of a key hides the one a manager reads.
func (c *sourceCheck) manifest(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("package.json: %w", err)
	}
	for _, f := range manifestFields {
		if raw, ok := m[f]; ok {
			c.specs("package.json "+f, raw)
		}
	}
	if raw, ok := m["pnpm"]; ok {
		var p map[string]json.RawMessage
		if json.Unmarshal(raw, &p) == nil {
			if o, ok := p["overrides"]; ok {
				c.specs("package.json pnpm.overrides", o)
			}
		}
	}
	if raw, ok := m["packageManager"]; ok {
		var pm string
		if json.Unmarshal(raw, &pm) != nil || !packageManagerRE.MatchString(pm) {
			c.refuse("package.json packageManager", string(raw), "not a package manager's name and version")
		}
	}
	return nil
}

// specs checks a map of name to spec, or of name to a nested map (npm's
// overrides), whatever its depth.
func (c *sourceCheck) specs(where string, raw json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	for name, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil {
			// npm's overrides may refer to a dependency's spec: "$name".
			if !strings.HasPrefix(s, "$") {
				c.spec(where+" "+name, s, ".")
			}
			continue
		}
		c.specs(where+" "+name, v)
	}
}

// packageManagerRE is a packageManager field corepack reads as a release
// of a manager: its name, its version, perhaps a hash.
var packageManagerRE = regexp.MustCompile(`^(npm|pnpm|yarn)@[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.-]*(\+[a-z0-9]+\.[0-9a-fA-F]+)?$`)

// maxNamed bounds the packages a setup error names.
const maxNamed = 20

// err is the setup error naming what was refused, nil when nothing was.
func (c *sourceCheck) err(lockfile string) error {
	if len(c.refused) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "node setup: %s takes packages from outside the registry %s, refused before any install:", lockfile, c.reg)
	for i, r := range c.refused {
		if i == maxNamed {
			fmt.Fprintf(&b, "\n  and %d more", len(c.refused)-maxNamed)
			break
		}
		fmt.Fprintf(&b, "\n  %q from %q: %s", r.pkg, r.source, r.why)
	}
	return fmt.Errorf("%s", b.String())
}
