package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/redfix/redfix/pkg/sandbox"
)

// registries are the default registries npm said, by npm binary.
var registries sync.Map

// registry is the registry setup installs from and checks lockfiles
// against: the driver's Registry, else npm's own configured default, asked
// once per npm binary (npm config get registry, in an empty directory of
// redfix's with the scrubbed environment, so that no checkout's .npmrc is
// read). It is passed to the install explicitly (--registry), so that what
// is checked is what is used.
func (d Driver) registry(ctx context.Context) (registry, error) {
	if d.Registry != "" {
		r, err := parseRegistry(d.Registry)
		if err != nil {
			return registry{}, fmt.Errorf("node setup: the driver's %w", err)
		}
		return r, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return registry{}, fmt.Errorf("node setup: no registry configured, and no npm to ask for its default: %w", err)
	}
	if r, ok := registries.Load(npm); ok {
		return r.(registry), nil
	}
	said, err := d.askNPM(ctx, npm)
	if err != nil {
		return registry{}, err
	}
	r, err := parseRegistry(said)
	if err != nil {
		return registry{}, fmt.Errorf("node setup: npm's default %w", err)
	}
	registries.Store(npm, r)
	return r, nil
}

// askNPM runs npm config get registry.
func (d Driver) askNPM(ctx context.Context, npm string) (string, error) {
	dir, err := os.MkdirTemp("", "redfix-npm-config-")
	if err != nil {
		return "", fmt.Errorf("node setup: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "config", "get", "registry")
	cmd.Dir = dir
	path := os.Getenv("PATH")
	if bin, err := d.nodeBin(); err == nil {
		path = filepath.Dir(bin) + string(os.PathListSeparator) + path
	}
	cmd.Env = sandbox.Env("PATH="+path, "npm_config_update_notifier=false")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("node setup: ask npm for its registry (npm config get registry): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
