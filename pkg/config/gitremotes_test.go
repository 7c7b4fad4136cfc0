package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGitRemoteSettings: git remotes come from the file (a password
// inline or in a file) and from the environment (prefixes sharing one
// username and password, the password from a file too); their passwords
// are secrets redaction hides, and their files are secret files.
func TestGitRemoteSettings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, v string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pwFile := write("git-token", "file-token-0123456789\n")
	yaml := write("redfix.yaml", "git_remotes:\n  - prefix: https://git.example/team/\n    username: redfix-bot\n    password_file: "+pwFile+"\n  - prefix: git://git.internal/\n")
	cfg, err := Load(yaml, env(map[string]string{
		"REDFIX_GIT_REMOTE_PREFIXES":      "https://code.example/a/, https://code.example/b/",
		"REDFIX_GIT_REMOTE_USERNAME":      "bot",
		"REDFIX_GIT_REMOTE_PASSWORD_FILE": write("env-token", "env-token-0123456789"),
	}))
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Remotes()
	if len(r) != 4 || r[0].Password != "file-token-0123456789" || r[1].Username != "" || r[3].Prefix != "https://code.example/b/" || r[3].Password != "env-token-0123456789" {
		t.Fatalf("remotes %+v", r)
	}
	secrets := cfg.Secrets()
	for _, s := range []string{"file-token-0123456789", "env-token-0123456789"} {
		if !slices.Contains(secrets, s) {
			t.Errorf("Secrets() lacks %s", s)
		}
	}
	if len(cfg.SecretFiles) != 2 {
		t.Errorf("secret files %v, want the two password files", cfg.SecretFiles)
	}
}

// TestGitRemoteRefusals: a git remote that cannot be served as written is
// refused at load, naming the setting.
func TestGitRemoteRefusals(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		yaml string
		env  map[string]string
		want string
	}{
		"unknown key":            {yaml: "git_remotes:\n  - prefx: https://git.example/team/\n", want: "prefx"},
		"not a directory":        {yaml: "git_remotes:\n  - prefix: https://git.example/team\n", want: "git_remotes[0]"},
		"ssh":                    {yaml: "git_remotes:\n  - prefix: ssh://git@git.example/team/\n", want: "scheme ssh"},
		"username alone":         {yaml: "git_remotes:\n  - prefix: https://git.example/team/\n    username: bot\n", want: "go together"},
		"credentials on git":     {yaml: "git_remotes:\n  - prefix: git://git.example/\n    username: bot\n    password: pw\n", want: "git:// carries no credentials"},
		"credentials in clear":   {yaml: "git_remotes:\n  - prefix: http://git.example/\n    username: bot\n    password: pw\n", want: "in clear"},
		"twice":                  {yaml: "git_remotes:\n  - prefix: https://git.example/team/\n  - prefix: https://GIT.example:443/team/\n", want: "configured twice"},
		"password and file":      {yaml: "git_remotes:\n  - prefix: https://git.example/team/\n    username: bot\n    password: pw\n    password_file: " + empty + "\n", want: "not both"},
		"empty password file":    {yaml: "git_remotes:\n  - prefix: https://git.example/team/\n    username: bot\n    password_file: " + empty + "\n", want: "is empty"},
		"env credentials alone":  {env: map[string]string{"REDFIX_GIT_REMOTE_USERNAME": "bot", "REDFIX_GIT_REMOTE_PASSWORD": "pw"}, want: "REDFIX_GIT_REMOTE_PREFIXES"},
		"env password and file":  {env: map[string]string{"REDFIX_GIT_REMOTE_PASSWORD": "pw", "REDFIX_GIT_REMOTE_PASSWORD_FILE": empty}, want: "not both"},
		"env prefix no password": {env: map[string]string{"REDFIX_GIT_REMOTE_PREFIXES": "https://git.example/team/", "REDFIX_GIT_REMOTE_USERNAME": "bot"}, want: "go together"},
	} {
		path := ""
		if c.yaml != "" {
			path = filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
			if err := os.WriteFile(path, []byte(c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Load(path, env(c.env)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Load = %v, want an error saying %q", name, err, c.want)
		}
	}
}
