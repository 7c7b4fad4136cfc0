// Package repourl turns the many spellings of a repository's location into
// one canonical string, the only form redfix keys anything on (ingest,
// triage groups, the store, the publish ledger), and matches canonical
// locations against an allowlist.
//
// Canonical forms:
//   - remote URLs: scheme://host[:port]/path with the scheme and host in
//     lower case, no credentials (an ssh user name is kept, it is not a
//     secret), no default port, the path cleaned ("..", "//" resolved)
//     without a trailing "/" or ".git", no query or fragment;
//   - scp-like "user@host:path" is the ssh URL it means;
//   - local repositories (a path or a file:// URL): the absolute, cleaned
//     path, symbolic links resolved when it exists, without a trailing
//     "/.git".
package repourl

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// ErrInvalid marks a location that is not a repository redfix can use.
var ErrInvalid = errors.New("invalid repository location")

var defaultPorts = map[string]string{"https": "443", "http": "80", "ssh": "22", "git": "9418"}

// scpLike is git's "user@host:path" syntax (no scheme, a colon before the
// first slash).
var scpLike = regexp.MustCompile(`^([A-Za-z0-9._~-]+@)?([A-Za-z0-9.-]+):([^/].*)?$`)

// Canonical returns the canonical form of raw, or an error wrapping
// ErrInvalid saying why raw is not a usable repository location.
func Canonical(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", fmt.Errorf("%w: empty", ErrInvalid)
	case strings.HasPrefix(s, "-"):
		return "", fmt.Errorf("%w: %q starts with '-'", ErrInvalid, raw)
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) }) >= 0:
		return "", fmt.Errorf("%w: %q holds control characters", ErrInvalid, raw)
	case len(s) > 2048:
		return "", fmt.Errorf("%w: longer than 2048 bytes", ErrInvalid)
	}
	if i := strings.Index(s, "://"); i > 0 {
		return canonicalURL(s)
	}
	if strings.Contains(s, "::") {
		// git's transport::address syntax (ext::, fd::, …).
		return "", fmt.Errorf("%w: %q: transport syntax is not allowed", ErrInvalid, raw)
	}
	if m := scpLike.FindStringSubmatch(s); m != nil && !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, ".") && len(m[2]) > 1 {
		return canonicalURL("ssh://" + m[1] + m[2] + "/" + m[3])
	}
	return canonicalPath(s)
}

func canonicalURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("%w: %q: a file URL on another host", ErrInvalid, s)
		}
		return canonicalPath(u.Path)
	case "https", "http", "ssh", "git":
	default:
		return "", fmt.Errorf("%w: %q: scheme %q is not supported (https, http, ssh, git, file)", ErrInvalid, s, u.Scheme)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", fmt.Errorf("%w: %q: no host", ErrInvalid, s)
	}
	if strings.HasPrefix(host, "-") {
		return "", fmt.Errorf("%w: %q: host starts with '-'", ErrInvalid, s)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6
	}
	if p := u.Port(); p != "" && p != defaultPorts[scheme] {
		host += ":" + p
	}
	user := ""
	if scheme == "ssh" && u.User != nil && u.User.Username() != "" {
		user = u.User.Username() + "@"
	}
	p := path.Clean("/" + u.Path)
	p = strings.TrimSuffix(p, "/")
	p = strings.TrimSuffix(p, ".git")
	p = strings.TrimSuffix(p, "/")
	if p == "" || p == "/" {
		return "", fmt.Errorf("%w: %q: no repository path", ErrInvalid, s)
	}
	return scheme + "://" + user + host + (&url.URL{Path: p}).EscapedPath(), nil
}

func canonicalPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("%w: empty path", ErrInvalid)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrInvalid, p, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if filepath.Base(abs) == ".git" {
		abs = filepath.Dir(abs)
	}
	return abs, nil
}

// IsLocal reports whether a canonical location is a local path.
func IsLocal(canonical string) bool { return strings.HasPrefix(canonical, "/") }

// IsNetwork reports whether loc is fetched over the network (an https,
// http, ssh or git URL, or scp-like git@host:path), as opposed to a local
// path or a file URL. It reads loc as written, canonical or not; on a
// canonical location it is the opposite of IsLocal.
func IsNetwork(loc string) bool {
	for _, p := range []string{"https://", "http://", "ssh://", "git://"} {
		if strings.HasPrefix(loc, p) {
			return true
		}
	}
	return strings.HasPrefix(loc, "git@")
}

// Prefix is the canonical form of a URL prefix that names the
// repositories under it ("https://git.example/team/"): the scheme and host
// as Canonical writes them, the path cleaned and ending with "/", no
// credentials, query or fragment. A canonical location is under the prefix
// when it starts with it.
func Prefix(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: prefix %q: %v", ErrInvalid, raw, err)
	case !strings.Contains(s, "://"):
		return "", fmt.Errorf("%w: prefix %q is not a URL (https://host/path/)", ErrInvalid, raw)
	case u.User != nil && !strings.EqualFold(u.Scheme, "ssh"):
		return "", fmt.Errorf("%w: prefix %q holds credentials (configure them apart)", ErrInvalid, raw)
	case u.User != nil:
		if _, ok := u.User.Password(); ok {
			return "", fmt.Errorf("%w: prefix %q holds a password (configure it apart)", ErrInvalid, raw)
		}
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#*"):
		return "", fmt.Errorf("%w: prefix %q holds a query, a fragment or a pattern", ErrInvalid, raw)
	case !strings.HasSuffix(u.Path, "/") && u.Path != "":
		return "", fmt.Errorf("%w: prefix %q must end with \"/\" (a directory of repositories)", ErrInvalid, raw)
	}
	// Canonicalized as a repository under it, whose name is then cut off.
	const marker = "zzrepozz"
	c, err := Canonical(strings.TrimSuffix(s, "/") + "/" + marker)
	if err != nil {
		return "", fmt.Errorf("prefix %q: %w", raw, err)
	}
	if IsLocal(c) || !strings.HasSuffix(c, "/"+marker) {
		return "", fmt.Errorf("%w: prefix %q is not a network URL", ErrInvalid, raw)
	}
	return strings.TrimSuffix(c, marker), nil
}
