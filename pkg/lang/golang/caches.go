package golang

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/sandbox"
)

// caches are the Go caches of the repository named on ctx, which Setup
// fills (sandbox.Cmd.Fill): its module cache and its build cache, in the
// repository's cache directory (the sandbox's, per repository and trust).
func caches(ctx context.Context) []string {
	dir := sandbox.CacheDir(ctx)
	return []string{filepath.Join(dir, "mod"), filepath.Join(dir, "go-build")}
}

// registries are the endpoints Setup fetches modules from: the host's
// module proxies and checksum database, as go env says them (asked once
// per setup, on the host with the scrubbed environment). None when the go
// command cannot say: the download then reaches nothing.
func registries(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "go", "env", "GOPROXY", "GOSUMDB")
	c.Env = sandbox.Env()
	out, err := c.Output()
	if err != nil {
		return nil
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != 2 {
		return nil
	}
	return endpoints(strings.TrimSpace(f[0]), strings.TrimSpace(f[1]))
}

// endpoints are the registries of a GOPROXY and a GOSUMDB: every proxy of
// the list, and the checksum database's address (its URL when it names
// one, else https at its name; none when it is off).
func endpoints(goproxy, gosumdb string) []string {
	out := strings.FieldsFunc(goproxy, func(r rune) bool { return r == ',' || r == '|' })
	switch db := strings.Fields(gosumdb); {
	case len(db) == 0 || db[0] == "off":
	case len(db) > 1:
		out = append(out, db[1])
	default:
		name, _, _ := strings.Cut(db[0], "+")
		out = append(out, "https://"+name)
	}
	return out
}
