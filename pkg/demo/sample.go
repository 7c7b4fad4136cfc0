// Package demo builds the sample repository that `bot demo` repairs: a small
// Go module with real history in which one commit breaks a test through a
// real bug, followed by unrelated commits, and the CI report of its head.
package demo

import (
	"context"
	"embed"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/sandbox"
)

//go:embed history/*.txtar
var history embed.FS

// authors of the sample's commits, by commit number (1-based).
var authors = []string{
	"Ada Lovelace <ada@shop.example>",
	"Ada Lovelace <ada@shop.example>",
	"Grace Hopper <grace@shop.example>",
	"Linus Pauling <linus@shop.example>",
	"Grace Hopper <grace@shop.example>",
	"Ada Lovelace <ada@shop.example>",
}

// Sample is the built repository.
type Sample struct {
	Dir     string
	Commits []string // oldest first
	// Good is the last commit at which every test passes (CI's last green);
	// Head is the failing branch head CI reports on.
	Good, Head string
	// Report is `go test -json ./...` at Head.
	Report []byte
}

// Build writes the sample repository into dir (which must not exist or be
// empty) and runs its tests at the head, as CI would.
func Build(ctx context.Context, dir string) (Sample, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return Sample{}, fmt.Errorf("sample repository: %s is not empty", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Sample{}, fmt.Errorf("sample repository: %w", err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		return Sample{}, fmt.Errorf("sample repository: %w", err)
	}
	names, err := history.ReadDir("history")
	if err != nil {
		return Sample{}, err
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
	s := Sample{Dir: dir}
	when := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	for i, e := range names {
		data, err := history.ReadFile(path.Join("history", e.Name()))
		if err != nil {
			return Sample{}, err
		}
		ar := txtar.Parse(data)
		for _, f := range ar.Files {
			p := filepath.Join(dir, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return Sample{}, err
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				return Sample{}, err
			}
		}
		msg := strings.TrimSpace(string(ar.Comment))
		date := when.Add(time.Duration(i) * 26 * time.Hour).Format(time.RFC3339)
		if _, err := repo.Git(ctx, "add", "-A"); err != nil {
			return Sample{}, err
		}
		if _, err := repo.Git(ctx, "commit", "-q", "--author", authors[i%len(authors)], "--date", date, "-m", msg); err != nil {
			return Sample{}, fmt.Errorf("sample commit %s: %w", e.Name(), err)
		}
		sha, err := repo.Resolve(ctx, "HEAD")
		if err != nil {
			return Sample{}, err
		}
		s.Commits = append(s.Commits, sha)
	}
	// CI was last green at the commit before the breaking one's parent:
	// bisection then has more than one candidate to search.
	s.Good = s.Commits[1]
	s.Head = s.Commits[len(s.Commits)-1]
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: []string{"go", "test", "-json", "-count=1", "./..."}, Timeout: 5 * time.Minute})
	if err != nil {
		return Sample{}, fmt.Errorf("sample CI run: %w", err)
	}
	s.Report = []byte(res.Output)
	return s, nil
}
