package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// absolutePaths makes every path of the configuration absolute, once, from
// the working directory at load: the data directory and the directories
// beneath it that have settings of their own, the configuration file, the
// secret files, and the programs named by a path rather than a name on
// PATH. What runs later resolves nothing against a directory of its own
// (git run in a mirror directory, a command in a work tree), so a relative
// data_dir means the same everywhere.
func (c *Config) absolutePaths() error {
	paths := []*string{
		&c.DataDir, &c.File, &c.Publish.Dir, &c.Checkouts.MirrorDir,
		&c.Sandbox.CacheDir, &c.GitHub.PrivateKeyFile, &c.NATS.CredentialsFile,
		&c.Languages.Node.CacheDir,
	}
	if c.Sandbox.SeedCache != "off" {
		paths = append(paths, &c.Sandbox.SeedCache)
	}
	for i := range c.SecretFiles {
		paths = append(paths, &c.SecretFiles[i])
	}
	// A program is a path when it holds a slash ("./venv/bin/python"),
	// else a name looked up on PATH, which stays as it is.
	for _, p := range []*string{&c.Languages.Python.Interpreter, &c.Languages.Python.Pyflakes, &c.Languages.Node.Node} {
		if strings.Contains(*p, "/") {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		if *p == "" || filepath.IsAbs(*p) {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("make the configured path %q absolute: %w", *p, err)
		}
		*p = abs
	}
	return nil
}
