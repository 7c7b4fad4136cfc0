package demo

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/report"
)

func TestBuildMakesAFailingHistory(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "repo")
	s, err := Build(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Commits) != 6 || s.Good == "" || s.Head != s.Commits[5] {
		t.Fatalf("sample = %+v", s)
	}
	rep, err := report.Parse(s.Report)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 1 {
		t.Fatalf("CI report has %d failures, want 1: %+v", len(rep.Failures), rep.Failures)
	}
	f := rep.Failures[0]
	if f.ID() != "example.com/shop/pricing.TestVolumeDiscount/at_threshold" || !strings.Contains(f.Message, "want 9000") {
		t.Fatalf("failure = %+v", f)
	}
	if _, err := Build(ctx, dir); err == nil {
		t.Fatal("building into a non-empty directory was accepted")
	}
}
