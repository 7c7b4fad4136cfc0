package config

import (
	"os"
	"path/filepath"
	"testing"
)

// Every path of a loaded configuration is absolute, taken from the working
// directory at load: the file's, the environment's and the secret files',
// and programs named by a path; names looked up on PATH stay names.
func TestLoadMakesPathsAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	yaml := `data_dir: data
publish: {dir: out/prs}
checkouts: {mirror_dir: ./mirrors}
sandbox: {cache_dir: cache, seed_cache: seed}
github: {app_id: 7, private_key_file: keys/app.pem}
nats: {credentials_file: nats.creds}
languages:
  python: {interpreter: venv/bin/python, pyflakes: pyflakes3}
  node: {node: node, cache_dir: ../node-cache}
`
	if err := os.WriteFile("redfix.yaml", []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("token", []byte("t0ken-from-a-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"REDFIX_INGEST_TOKEN_FILE": "token"}
	cfg, err := Load("redfix.yaml", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	for what, c := range map[string]struct{ got, want string }{
		"data_dir":                     {cfg.DataDir, filepath.Join(dir, "data")},
		"the file":                     {cfg.File, filepath.Join(dir, "redfix.yaml")},
		"publish.dir":                  {cfg.Publish.Dir, filepath.Join(dir, "out/prs")},
		"checkouts.mirror_dir":         {cfg.Checkouts.MirrorDir, filepath.Join(dir, "mirrors")},
		"sandbox.cache_dir":            {cfg.Sandbox.CacheDir, filepath.Join(dir, "cache")},
		"sandbox.seed_cache":           {cfg.Sandbox.SeedCache, filepath.Join(dir, "seed")},
		"github.private_key_file":      {cfg.GitHub.PrivateKeyFile, filepath.Join(dir, "keys/app.pem")},
		"nats.credentials_file":        {cfg.NATS.CredentialsFile, filepath.Join(dir, "nats.creds")},
		"languages.python.interpreter": {cfg.Languages.Python.Interpreter, filepath.Join(dir, "venv/bin/python")},
		"languages.python.pyflakes":    {cfg.Languages.Python.Pyflakes, "pyflakes3"},
		"languages.node.node":          {cfg.Languages.Node.Node, "node"},
		"languages.node.cache_dir":     {cfg.Languages.Node.CacheDir, filepath.Join(filepath.Dir(dir), "node-cache")},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", what, c.got, c.want)
		}
	}
	if len(cfg.SecretFiles) != 1 || cfg.SecretFiles[0] != filepath.Join(dir, "token") {
		t.Errorf("secret files %q, want %s", cfg.SecretFiles, filepath.Join(dir, "token"))
	}

	// From the environment too; "off" is no path.
	env = map[string]string{"REDFIX_DATA_DIR": "elsewhere/data", "REDFIX_SANDBOX_SEED_CACHE": "off"}
	cfg, err = Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != filepath.Join(dir, "elsewhere/data") || cfg.Sandbox.SeedCache != "off" || cfg.File != "" {
		t.Errorf("from the environment: data_dir %q, seed_cache %q, file %q", cfg.DataDir, cfg.Sandbox.SeedCache, cfg.File)
	}
}
