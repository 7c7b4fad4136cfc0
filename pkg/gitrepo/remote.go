package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/repourl"
)

// ErrUnfetchable is returned when a remote command (clone, fetch,
// ls-remote) failed although the repository's server took the
// connection: the server answered, and what was asked (the repository, a
// commit of it) could not be fetched from it: no such repository, no
// access to it, no such commit, whatever the server's words. Trying again
// soon will not change it.
var ErrUnfetchable = errors.New("the server answered, but the repository or commit could not be fetched from it")

// ErrUnreachable is returned when a remote command failed and the
// repository's server does not take a connection (refused, no such host,
// no route): a failure to ask, which may pass.
var ErrUnreachable = errors.New("the repository's server cannot be reached")

// reachTimeout bounds the connection that tells a server's answer from
// its absence.
const reachTimeout = 10 * time.Second

// classify says what a failed remote command means, from whether its
// source answers rather than from what git or the server printed: for a
// remote source, ErrUnreachable when its server takes no connection,
// ErrUnfetchable when it does (unless an HTTP server said to come back
// later: 429 or 5xx, a failure that may pass); for a local path, the
// file system's answer that no repository is there (ErrNoRepository).
// Anything else is err unchanged.
func (r Repo) classify(ctx context.Context, args []string, output string, err error) error {
	src := r.source(ctx, args)
	if src == "" {
		return err
	}
	if addr, ok := serverAddress(src); ok {
		if rerr := reach(ctx, addr); rerr != nil {
			return fmt.Errorf("%w (%s: %v): %w", ErrUnreachable, addr, rerr, err)
		}
		if busy.MatchString(output) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrUnfetchable, err)
	}
	low := strings.ToLower(output)
	for _, sign := range noRepositorySigns {
		if strings.Contains(low, sign) {
			return fmt.Errorf("%w: %w", ErrNoRepository, err)
		}
	}
	return err
}

// busy is git's report of an HTTP status that asks the client to come back
// later (too many requests, a server error).
var busy = regexp.MustCompile(`returned error: (429|5[0-9][0-9])\b`)

// source is the repository a remote command reaches: its first operand,
// or, when that names a remote of the repository ("origin"), the remote's
// URL. "" when it cannot be told.
func (r Repo) source(ctx context.Context, args []string) string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		i++ // git's own options, before the command
	}
	for i++; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
	}
	if i >= len(args) {
		return ""
	}
	src := args[i]
	if isRemoteName(src) {
		out, err := r.Git(ctx, "config", "--get", "remote."+src+".url")
		if err != nil {
			return ""
		}
		return strings.TrimSpace(out)
	}
	return src
}

// isRemoteName reports an operand that names a configured remote rather
// than a location.
func isRemoteName(s string) bool {
	return s != "" && !strings.ContainsAny(s, "/:\\.") && s != "~"
}

// serverAddress is host:port of the server that serves a network
// location; ok is false for a local one (a path, a file URL).
func serverAddress(src string) (addr string, ok bool) {
	if !strings.Contains(src, "://") {
		if m := scpLike.FindStringSubmatch(src); m != nil {
			return net.JoinHostPort(m[1], "22"), true
		}
		return "", false
	}
	if !repourl.IsNetwork(src) {
		return "", false // file://
	}
	u, err := url.Parse(src)
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80", "ssh": "22", "git": "9418"}[strings.ToLower(u.Scheme)]
	}
	if port == "" {
		return "", false
	}
	return net.JoinHostPort(u.Hostname(), port), true
}

// scpLike is git's "[user@]host:path" (no scheme; a host of two letters at
// least, so that a Windows drive is not one).
var scpLike = regexp.MustCompile(`^(?:[A-Za-z0-9._~-]+@)?([A-Za-z0-9.-]{2,}):[^/]`)

// reach connects to addr and hangs up: nil when something there takes a
// connection. (A server reached only through a proxy counts as
// unreachable: its failures are retried, never taken for an answer.)
func reach(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, reachTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			return op.Err
		}
		return err
	}
	return c.Close()
}
