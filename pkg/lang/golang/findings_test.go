package golang

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/findings"
)

func staticCheckout(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A file with formatting debt and a vet finding at base: the change adds
// one badly formatted line and moves the old lines down; only that line is
// new.
func TestStaticFindingsNewOnly(t *testing.T) {
	ctx := context.Background()
	const mod = "module example.com/m\n\ngo 1.22\n"
	base := staticCheckout(t, map[string]string{
		"go.mod": mod,
		"a/a.go": "package a\n\nimport \"fmt\"\n\nfunc F(x int) string {\nreturn fmt.Sprintf(\"%s\", x)\n}\n",
	})
	head := staticCheckout(t, map[string]string{
		"go.mod": mod,
		"a/a.go": "package a\n\nimport \"fmt\"\n\n// G is new.\nfunc G() int {\nreturn   2\n}\n\nfunc F(x int) string {\nreturn fmt.Sprintf(\"%s\", x)\n}\n",
	})
	checks := staticChecks{Build: []string{"./..."}, Vet: []string{"./a"}, Gofmt: []string{"a/a.go"}}
	before, err := runStatic(ctx, base, checks)
	if err != nil {
		t.Fatal(err)
	}
	after, err := runStatic(ctx, head, checks)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < 2 {
		t.Fatalf("base findings = %+v, want the vet finding and the formatting debt", before)
	}
	fresh, old := findings.Compare(after, before)
	if len(fresh) != 1 || !strings.Contains(fresh[0].Text, `gofmt would rewrite "return   2"`) {
		t.Errorf("new findings = %+v", fresh)
	}
	if old != len(before) {
		t.Errorf("old = %d, want %d", old, len(before))
	}
	for _, f := range after {
		if strings.Contains(f.Text, head) {
			t.Errorf("a finding names the checkout's path: %s", f.Text)
		}
	}
}
