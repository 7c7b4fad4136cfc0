package app

import (
	"path/filepath"
	"testing"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/workspace"
)

func TestPipelinePublishesOnGitHubWhenConfigured(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	pipe, err := NewPipeline(cfg, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pipe.Publisher.(*publish.Local); !ok {
		t.Errorf("with no GitHub configured the publisher is %T, want the local one", pipe.Publisher)
	}
	m, ok := pipe.Checkouts.(*workspace.Mirrors)
	if !ok || m.Dir != filepath.Join(cfg.DataDir, "mirrors") || m.Auth != nil {
		t.Errorf("checkouts %T %+v", pipe.Checkouts, m)
	}

	cfg.GitHub.Token = "ghp_configured"
	if cfg.PublishMode() != "github" {
		t.Fatalf("mode %q", cfg.PublishMode())
	}
	pipe, err = NewPipeline(cfg, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	b, ok := pipe.Publisher.(byRepo)
	if !ok || b.github == nil || b.local == nil {
		t.Fatalf("with GitHub configured the publisher is %T", pipe.Publisher)
	}
	if m := pipe.Checkouts.(*workspace.Mirrors); m.Auth == nil {
		t.Error("mirrors get no credentials with GitHub configured")
	}
}
