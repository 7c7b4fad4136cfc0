package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// RelayConfig is what the relay inside a setup's sandbox runs with.
type RelayConfig struct {
	// Socket is the proxy's Unix socket as the sandbox shows it.
	Socket string
	// Forward are loopback endpoints ("127.0.0.1:8080") the relay listens
	// on and forwards as they are.
	Forward []string
	// Args is the setup command.
	Args []string
}

// ProxyEnv is the environment that sends a command's HTTP and HTTPS
// requests to the proxy at proxyURL, loopback included: every tool's own
// spelling of it.
func ProxyEnv(proxyURL string) []string {
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "npm_config_proxy", "npm_config_https_proxy"} {
		env = append(env, k+"="+proxyURL)
	}
	for _, k := range []string{"NO_PROXY", "no_proxy", "npm_config_noproxy", "ALL_PROXY", "all_proxy"} {
		env = append(env, k+"=")
	}
	return env
}

// Relay listens on the namespace's loopback (an HTTP proxy on a free port,
// and each Forward endpoint), hands every connection to the proxy outside
// through cfg.Socket, and runs the command with its proxy variables
// pointing at the relay. It returns the command's exit status (128 plus
// the signal's number when a signal ended it).
func Relay(ctx context.Context, cfg RelayConfig) (int, error) {
	if len(cfg.Args) == 0 {
		return 0, errors.New("egress relay: no command")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The forwarded endpoints' ports are fixed (the index's own port), the
	// proxy's is any free one: bind the fixed ones first, or the kernel may
	// hand the proxy the very port a forward then finds taken.
	for _, ep := range cfg.Forward {
		ln, err := net.Listen("tcp", ep)
		if err != nil {
			return 0, fmt.Errorf("egress relay: listen on %s: %w", ep, err)
		}
		defer ln.Close()
		go relayAccept(ctx, ln, cfg.Socket, preambleForward+ep)
	}
	proxyLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("egress relay: listen: %w", err)
	}
	defer proxyLn.Close()
	go relayAccept(ctx, proxyLn, cfg.Socket, preambleProxy)
	cmd := exec.Command(cfg.Args[0], cfg.Args[1:]...)
	cmd.Env = append(os.Environ(), ProxyEnv("http://"+proxyLn.Addr().String())...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("egress relay: start %s: %w", cfg.Args[0], err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return exit.ExitCode(), nil
	default:
		return 0, fmt.Errorf("egress relay: %s: %w", cfg.Args[0], err)
	}
}

// relayAccept hands each connection ln accepts to the proxy, after the
// preamble.
func relayAccept(ctx context.Context, ln net.Listener, socket, preamble string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			var d net.Dialer
			up, err := d.DialContext(ctx, "unix", socket)
			if err != nil {
				return
			}
			if _, err := io.WriteString(up, preamble+"\n"); err != nil {
				up.Close()
				return
			}
			pipe(c, c, up)
		}()
	}
}
