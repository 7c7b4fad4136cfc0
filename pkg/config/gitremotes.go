package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/redfix/redfix/pkg/forge/gitremote"
)

// GitRemote is a plain git remote redfix delivers fixes to by pushing a
// branch: the repositories under Prefix, and the credentials git pushes
// (and fetches) them with.
type GitRemote struct {
	// Prefix is an https, http (loopback only, with credentials) or git
	// URL ending with "/": the repositories whose URL starts with it
	// ("https://git.example/team/").
	Prefix string `yaml:"prefix"`
	// Username and Password (a password or an access token) are sent with
	// HTTP basic authentication; PasswordFile names a file holding the
	// password instead. None of them for a remote that asks no
	// credentials (git daemon).
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	PasswordFile string `yaml:"password_file"`
}

// gitRemoteEnv is the git remote the environment configures, added to
// the file's: REDFIX_GIT_REMOTE_PREFIXES, each a remote with
// REDFIX_GIT_REMOTE_USERNAME and REDFIX_GIT_REMOTE_PASSWORD(_FILE).
type gitRemoteEnv struct {
	prefixes           []string
	username, password string
}

// gitRemoteVars are the environment variables of gitRemoteEnv.
var gitRemoteVars = []struct {
	name string
	set  func(c *Config, v string) error
}{
	{"REDFIX_GIT_REMOTE_PREFIXES", func(c *Config, v string) error { c.gitRemoteEnv.prefixes = commaList(v); return nil }},
	{"REDFIX_GIT_REMOTE_USERNAME", func(c *Config, v string) error { c.gitRemoteEnv.username = v; return nil }},
	{"REDFIX_GIT_REMOTE_PASSWORD", func(c *Config, v string) error { c.gitRemoteEnv.password = v; return nil }},
}

// The remote's password is a secret: REDFIX_GIT_REMOTE_PASSWORD_FILE may
// name a file holding it.
func init() { secretVars["REDFIX_GIT_REMOTE_PASSWORD"] = true }

// loadGitRemotes adds the environment's git remotes to the file's, and
// reads each password_file (recorded in SecretFiles).
func (c *Config) loadGitRemotes(getenv func(string) string) error {
	if getenv != nil {
		for _, e := range gitRemoteVars {
			v, err := lookup(c, getenv, e.name)
			if err != nil {
				return err
			}
			if v != "" {
				_ = e.set(c, v)
			}
		}
	}
	env := c.gitRemoteEnv
	if len(env.prefixes) == 0 && (env.username != "" || env.password != "") {
		return errors.New("environment REDFIX_GIT_REMOTE_USERNAME and REDFIX_GIT_REMOTE_PASSWORD need REDFIX_GIT_REMOTE_PREFIXES")
	}
	for _, p := range env.prefixes {
		c.GitRemotes = append(c.GitRemotes, GitRemote{Prefix: p, Username: env.username, Password: env.password})
	}
	for i := range c.GitRemotes {
		r := &c.GitRemotes[i]
		if r.PasswordFile == "" {
			continue
		}
		if r.Password != "" {
			return fmt.Errorf("git_remotes[%d] (%s): set password or password_file, not both", i, r.Prefix)
		}
		data, err := os.ReadFile(r.PasswordFile)
		if err != nil {
			return fmt.Errorf("git_remotes[%d] (%s) password_file: %w", i, r.Prefix, err)
		}
		if r.Password = strings.TrimRight(string(data), "\r\n"); r.Password == "" {
			return fmt.Errorf("git_remotes[%d] (%s) password_file: %s is empty", i, r.Prefix, r.PasswordFile)
		}
		if !slices.Contains(c.SecretFiles, r.PasswordFile) {
			c.SecretFiles = append(c.SecretFiles, r.PasswordFile)
		}
	}
	return nil
}

// Remotes are the git remotes as the driver takes them.
func (c Config) Remotes() []gitremote.Remote {
	out := make([]gitremote.Remote, 0, len(c.GitRemotes))
	for _, r := range c.GitRemotes {
		out = append(out, gitremote.Remote{Prefix: r.Prefix, Username: r.Username, Password: r.Password})
	}
	return out
}

// validateGitRemotes checks each remote as the driver will serve it, and
// that no prefix is configured twice.
func (c Config) validateGitRemotes() []error {
	var errs []error
	seen := map[string]bool{}
	for i, r := range c.Remotes() {
		checked, err := gitremote.Check(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("git_remotes[%d]: %w", i, err))
			continue
		}
		if seen[checked.Prefix] {
			errs = append(errs, fmt.Errorf("git_remotes[%d]: the prefix %s is configured twice", i, checked.Prefix))
		}
		seen[checked.Prefix] = true
	}
	return errs
}

// gitRemoteSecrets are the remotes' passwords.
func (c Config) gitRemoteSecrets() []string {
	var out []string
	for _, r := range c.GitRemotes {
		if r.Password != "" {
			out = append(out, r.Password)
		}
	}
	return out
}
