package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Limits of what a connection may send before the proxy decides.
const (
	preambleTimeout = 30 * time.Second
	maxHeaderBytes  = 1 << 20
	maxRefused      = 20
	dialTimeout     = 30 * time.Second
)

// Proxy serves the connections a relay forwards, reaching only the
// endpoints its Allow holds. It is safe for concurrent use.
type Proxy struct {
	allow Allow
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)

	mu      sync.Mutex
	refused []string
	wg      sync.WaitGroup
}

// NewProxy returns a proxy that reaches the endpoints of allow.
func NewProxy(allow Allow) *Proxy {
	d := &net.Dialer{Timeout: dialTimeout}
	return &Proxy{allow: allow, dial: d.DialContext}
}

// Refused lists the endpoints a connection asked for and was refused, in
// the order first asked (at most twenty).
func (p *Proxy) Refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.refused...)
}

func (p *Proxy) refuse(target string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := false
	for _, r := range p.refused {
		seen = seen || r == target
	}
	if !seen && len(p.refused) < maxRefused {
		p.refused = append(p.refused, target)
	}
	return fmt.Errorf("egress: %s: %w", target, ErrRefused)
}

// Serve accepts connections on ln until it is closed or ctx ends, and
// waits for the connections it serves to end. Closing ln is the caller's.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { <-ctx.Done(); _ = ln.Close() }()
	defer p.wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("egress: accept: %w", err)
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serveConn(ctx, c)
		}()
	}
}

// serveConn reads the relay's preamble and serves what it names.
func (p *Proxy) serveConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	_ = c.SetReadDeadline(time.Now().Add(preambleTimeout))
	lr := &io.LimitedReader{R: c, N: maxPreamble}
	br := bufio.NewReader(lr)
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	line = strings.TrimSpace(line)
	switch {
	case line == preambleProxy:
		lr.N = maxHeaderBytes
		p.serveHTTP(ctx, c, br, lr)
	case strings.HasPrefix(line, preambleForward):
		target := strings.TrimPrefix(line, preambleForward)
		if !p.allow.Allows(target) {
			_ = p.refuse(target)
			return
		}
		up, err := p.dial(ctx, "tcp", target)
		if err != nil {
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		lr.N = 1 << 62
		pipe(c, br, up)
	}
}

// serveHTTP serves an HTTP proxy's requests: CONNECT to an allowed
// endpoint becomes a tunnel; GET and HEAD of an allowed http:// URL are
// forwarded. Everything else is answered with an error.
func (p *Proxy) serveHTTP(ctx context.Context, c net.Conn, br *bufio.Reader, lr *io.LimitedReader) {
	transport := &http.Transport{
		Proxy:              nil,
		DialContext:        p.dial,
		DisableCompression: true,
		MaxIdleConns:       4,
		IdleConnTimeout:    30 * time.Second,
	}
	defer transport.CloseIdleConnections()
	for {
		lr.N = maxHeaderBytes
		_ = c.SetReadDeadline(time.Now().Add(preambleTimeout))
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		if req.Method == http.MethodConnect {
			p.tunnel(ctx, c, br, lr, req)
			return
		}
		if !p.forward(ctx, c, transport, req) {
			return
		}
	}
}

// tunnel answers a CONNECT and joins the two connections.
func (p *Proxy) tunnel(ctx context.Context, c net.Conn, br *bufio.Reader, lr *io.LimitedReader, req *http.Request) {
	target := req.Host
	if _, _, err := net.SplitHostPort(target); err != nil {
		target = net.JoinHostPort(target, "443")
	}
	if !p.allow.Allows(target) {
		answer(c, http.StatusForbidden, p.refuse(target).Error())
		return
	}
	up, err := p.dial(ctx, "tcp", target)
	if err != nil {
		answer(c, http.StatusBadGateway, fmt.Sprintf("egress: %s: %v", target, err))
		return
	}
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		up.Close()
		return
	}
	lr.N = 1 << 62
	pipe(c, br, up)
}

// forward sends one plain HTTP request on and writes its answer back; it
// reports whether the connection may carry another request.
func (p *Proxy) forward(ctx context.Context, c net.Conn, transport *http.Transport, req *http.Request) bool {
	defer req.Body.Close()
	if req.URL.Scheme != "http" || req.URL.Host == "" {
		answer(c, http.StatusBadRequest, "egress: a proxy request names an absolute http:// URL (https goes through CONNECT)")
		return false
	}
	target := req.URL.Host
	if _, _, err := net.SplitHostPort(target); err != nil {
		target = net.JoinHostPort(target, "80")
	}
	if !p.allow.Allows(target) {
		answer(c, http.StatusForbidden, p.refuse(target).Error())
		return false
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		answer(c, http.StatusMethodNotAllowed, "egress: only GET and HEAD reach a registry through redfix's proxy")
		return false
	}
	out := req.Clone(ctx)
	out.RequestURI = ""
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive", "Te", "Trailer", "Upgrade"} {
		out.Header.Del(h)
	}
	resp, err := transport.RoundTrip(out)
	if err != nil {
		answer(c, http.StatusBadGateway, fmt.Sprintf("egress: %s: %v", target, err))
		return false
	}
	defer resp.Body.Close()
	if err := resp.Write(c); err != nil {
		return false
	}
	return !req.Close && !resp.Close
}

// answer writes an error answer and asks the client to close.
func answer(c net.Conn, code int, msg string) {
	body := msg + "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}

// pipe copies between a client (whose first bytes may sit in br, a reader
// of c) and an upstream connection until both directions end, then closes
// upstream.
func pipe(c net.Conn, br io.Reader, up net.Conn) {
	defer up.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(up, br)
		closeWrite(up)
	}()
	_, _ = io.Copy(c, up)
	closeWrite(c)
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}
