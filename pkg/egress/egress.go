// Package egress is the only way out of a dependency setup's sandbox: an
// allowlisting proxy that redfix runs outside the sandbox, on a Unix socket
// bound into it, and a relay that runs inside, in a network namespace of
// its own whose loopback is the setup's only interface.
//
// A setup command (pip, npm, go mod download) reaches the package
// registries it was given, by host and port, and nothing else: not the
// host's loopback (redfix's own API, NATS, Redis), not link-local (a
// cloud's metadata endpoint), not the private ranges around it. The relay
// offers the command an HTTP proxy on the namespace's loopback (its
// HTTP_PROXY and HTTPS_PROXY) and, for registries that themselves listen
// on a loopback address, the same address and port forwarded, so that a
// client that never uses a proxy for loopback still reaches them. Every
// connection it accepts goes to the proxy outside with a one-line
// preamble naming what it wants; the proxy decides, whatever the relay or
// anything else inside asked.
package egress

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
)

// Allow is the set of endpoints ("host:port", host lower-cased) a setup
// may reach.
type Allow struct{ endpoints map[string]bool }

// defaultPorts are the ports of the schemes registries are named with.
var defaultPorts = map[string]string{"http": "80", "https": "443"}

// ParseAllow makes the set of endpoints of registry URLs (a scheme, a host
// and an optional port and path, such as a loopback index's
// "http://127.0.0.1:8080/simple") and bare "host:port" endpoints. Local
// schemes (file://) and the words tools use for "no registry" ("off",
// "direct") name no endpoint and are skipped.
func ParseAllow(registries ...string) (Allow, error) {
	a := Allow{endpoints: map[string]bool{}}
	for _, r := range registries {
		r = strings.TrimSpace(r)
		switch {
		case r == "", r == "off", r == "direct", r == "none":
			continue
		case strings.HasPrefix(r, "file:"):
			continue
		}
		ep, err := endpoint(r)
		if err != nil {
			return Allow{}, err
		}
		a.endpoints[ep] = true
	}
	return a, nil
}

// endpoint is the "host:port" a registry names.
func endpoint(r string) (string, error) {
	if !strings.Contains(r, "://") {
		host, port, err := net.SplitHostPort(r)
		if err != nil || host == "" || port == "" {
			return "", fmt.Errorf("egress: registry %q: want a URL or host:port", r)
		}
		return normal(host, port), nil
	}
	u, err := url.Parse(r)
	if err != nil {
		return "", fmt.Errorf("egress: registry %q: %w", r, err)
	}
	port := u.Port()
	if port == "" {
		port = defaultPorts[strings.ToLower(u.Scheme)]
	}
	if u.Hostname() == "" || port == "" {
		return "", fmt.Errorf("egress: registry %q: want http or https with a host", r)
	}
	return normal(u.Hostname(), port), nil
}

func normal(host, port string) string {
	return net.JoinHostPort(strings.ToLower(strings.TrimSuffix(host, ".")), port)
}

// Allows reports whether the endpoint "host:port" is in the set.
func (a Allow) Allows(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	return a.endpoints[normal(host, port)]
}

// Endpoints lists the set, sorted.
func (a Allow) Endpoints() []string {
	var out []string
	for ep := range a.endpoints {
		out = append(out, ep)
	}
	sort.Strings(out)
	return out
}

// Loopback lists the endpoints whose host is a loopback address: the
// relay forwards each at its own address inside the namespace.
func (a Allow) Loopback() []string {
	var out []string
	for _, ep := range a.Endpoints() {
		host, _, _ := net.SplitHostPort(ep)
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
			out = append(out, ep)
		}
	}
	return out
}

// The preamble a relay sends before each connection it forwards: the
// protocol's name, then "proxy" (an HTTP proxy's requests follow) or
// "forward HOST:PORT" (the bytes of a connection to that endpoint).
const (
	preambleProxy   = "redfix-egress/1 proxy"
	preambleForward = "redfix-egress/1 forward "
	maxPreamble     = 512
)

// ErrRefused is returned for an endpoint the set does not allow.
var ErrRefused = errors.New("not a configured package registry")
