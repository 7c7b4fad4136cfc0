package app

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/redfix/redfix/pkg/config"
)

// A resync with a plain token cannot list the repositories a pattern of
// github.allow matches (a token lists none; it asks for each repository
// named in full): the bot says so at warn level when it starts the resync,
// naming the patterns, rather than logging "0 new failed runs" at info at
// every pass.
func TestResyncWithATokenWarnsOfPatterns(t *testing.T) {
	for _, c := range []struct {
		allow, want string
	}{
		{"acme/*,acme/shop", "the resync looks only at the repositories named in full"},
		{"acme/*", "the resync looks at no repository"},
		{"acme/shop", ""},
	} {
		t.Run(c.allow, func(t *testing.T) {
			clearEnv(t)
			env := map[string]string{"REDFIX_DATA_DIR": t.TempDir(), "REDFIX_GITHUB_TOKEN": "ghp_not-a-real-token-0123", "REDFIX_GITHUB_ALLOW": c.allow}
			cfg, err := config.Load("", func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			obs, logs := observer.New(zapcore.WarnLevel)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sys, err := Start(ctx, cfg, zap.New(obs))
			if err != nil {
				t.Fatal(err)
			}
			defer sys.Close()
			if sys.Resync(cfg) == nil {
				t.Fatal("no resync with a token")
			}
			warned := logs.FilterMessageSnippet("the resync looks").All()
			switch {
			case c.want == "" && len(warned) != 0:
				t.Errorf("warned with every repository named in full: %v", warned)
			case c.want != "" && (len(warned) != 1 || warned[0].Message[:len(c.want)] != c.want || warned[0].ContextMap()["patterns"] == nil):
				t.Errorf("warnings %v, want one saying %q and naming the patterns", logs.All(), c.want)
			}
		})
	}
}
