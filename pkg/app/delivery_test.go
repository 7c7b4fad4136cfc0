package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge/gitremote"
)

// TestIntakeRefusesRepositoriesWithNoDelivery: the bot decides at intake
// how each repository's fix will be delivered. With a git remote
// configured, a report of a repository under its prefix is accepted; the
// README's example repository, on no forge and under no prefix, is
// refused with a 4xx that says why, never triaged and repaired for
// nothing.
func TestIntakeRefusesRepositoriesWithNoDelivery(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.AllowRepos = []string{"https://git.example/**", "git://git.internal/**"}
	cfg.GitRemotes = []config.GitRemote{{Prefix: "git://git.internal/team/"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	sys, err := Start(ctx, cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if _, ok := sys.Forges.Named(gitremote.Name); !ok {
		t.Fatalf("forges %v: the configured git remote is not registered", sys.Forges.Drivers())
	}
	bot := httptest.NewServer(sys.Handler(cfg))
	defer bot.Close()
	post := func(repo string) (int, string) {
		t.Helper()
		u := bot.URL + "/api/v1/reports?" + url.Values{"repo": {repo}, "commit": {"0123456789abcdef0123456789abcdef01234567"}}.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(goodGoReport))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answer struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&answer)
		return resp.StatusCode, answer.Error
	}
	if code, msg := post("https://git.example/team/app.git"); code != http.StatusUnprocessableEntity || !strings.Contains(msg, "no configured forge serves https://git.example/team/app") {
		t.Errorf("the README's repository: %d %q, want 422 saying no forge serves it", code, msg)
	}
	if code, msg := post("git://git.internal/team/app.git"); code != http.StatusAccepted {
		t.Errorf("a repository of the git remote: %d %q, want it accepted", code, msg)
	}
}

// goodGoReport is a go test -json report with one failing test.
var goodGoReport = []byte(`{"Action":"run","Package":"example.com/m/a","Test":"TestX"}
{"Action":"fail","Package":"example.com/m/a","Test":"TestX","Elapsed":0}
{"Action":"fail","Package":"example.com/m/a","Elapsed":0}
`)
