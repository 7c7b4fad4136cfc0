package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/task"
)

// buildTimeout bounds each command of the static analysis run after an
// edit.
const buildTimeout = 3 * time.Minute

// checksOf names the static checks an edit of rel is held to: Go's tools
// for a Go file, its driver's for a file of the driver's language.
func (s *Session) checksOf(rel string) string {
	if s.env.Lang != nil && !strings.HasSuffix(rel, ".go") {
		if !s.env.Lang.IsSource(rel) {
			return "none for this file"
		}
		if named, ok := s.env.Lang.(interface{ Name() string }); ok {
			return "the " + named.Name() + " driver's checks"
		}
		return "the language driver's checks"
	}
	if !strings.HasSuffix(rel, ".go") {
		return "none for this file"
	}
	return "gofmt, go build, go vet"
}

// diagnose runs gofmt on an edited Go file, and go build then go vet on its
// package (in the module that holds it, nested ones too); another file of
// the language driver's, the driver's checks on it. It returns the
// findings that the task's commit does not have (the edit's), empty when
// there are none, and how many findings were there before. Files of no
// language have none.
func (s *Session) diagnose(ctx context.Context, abs, rel string) (fresh string, old int, err error) {
	if s.env.Lang != nil && !strings.HasSuffix(rel, ".go") {
		return s.diagnoseWith(ctx, s.env.Lang, rel)
	}
	if !strings.HasSuffix(rel, ".go") {
		return "", 0, nil
	}
	mod, pkg, ok := s.packageOf(abs)
	if !ok {
		mod = s.ws.Dir
	}
	checks := func(root string) findings.Checks {
		c := findings.Checks{Timeout: buildTimeout}
		if f, err := filepath.Rel(mod, abs); err == nil {
			if _, err := os.Stat(filepath.Join(root, f)); err == nil {
				c.Gofmt = []string{filepath.ToSlash(f)}
			}
		}
		if ok {
			c.Build, c.Vet = []string{pkg}, []string{pkg}
		}
		return c
	}
	head, err := findings.Run(ctx, mod, checks(mod))
	if err != nil {
		return "", 0, fmt.Errorf("static analysis of %s: %w", rel, err)
	}
	if len(head) == 0 {
		return "", 0, nil
	}
	baseRoot, err := s.baseCheckout(ctx)
	if err != nil {
		return "", 0, err
	}
	baseMod := baseRoot
	if r, err := filepath.Rel(s.ws.Dir, mod); err == nil {
		baseMod = filepath.Join(baseRoot, r)
	}
	var base []findings.Finding
	if _, err := os.Stat(baseMod); err == nil {
		if base, err = findings.Run(ctx, baseMod, checks(baseMod)); err != nil {
			return "", 0, fmt.Errorf("static analysis of %s at %s: %w", rel, task.Short(s.t.Commit), err)
		}
	}
	return newFindings(head, base)
}

// diagnoseWith runs the driver's checks on the edited file, in the
// workspace and in a checkout of the task's commit.
func (s *Session) diagnoseWith(ctx context.Context, l Language, rel string) (fresh string, old int, err error) {
	if !l.IsSource(rel) {
		return "", 0, nil
	}
	head, err := l.Check(ctx, s.ws.Dir, []string{rel})
	if err != nil {
		return "", 0, fmt.Errorf("static analysis of %s: %w", rel, err)
	}
	if len(head) == 0 {
		return "", 0, nil
	}
	baseRoot, err := s.baseCheckout(ctx)
	if err != nil {
		return "", 0, err
	}
	var base []findings.Finding
	if _, err := os.Stat(filepath.Join(baseRoot, filepath.FromSlash(rel))); err == nil {
		if base, err = l.Check(ctx, baseRoot, []string{rel}); err != nil {
			return "", 0, fmt.Errorf("static analysis of %s at %s: %w", rel, task.Short(s.t.Commit), err)
		}
	}
	return newFindings(head, base)
}

// newFindings are the findings of head that base does not have, as the
// edit's observation shows them, and how many were there before.
func newFindings(head, base []findings.Finding) (string, int, error) {
	news, old := findings.Compare(head, base)
	texts := findings.Texts(news)
	if len(texts) > 40 {
		texts = append(texts[:40], fmt.Sprintf("… and %d more", len(texts)-40))
	}
	return trimLines(strings.Join(texts, "\n"), 60), old, nil
}

// baseCheckout is a checkout of the task's commit next to the workspace,
// made once per episode, to tell an edit's findings from the old ones.
func (s *Session) baseCheckout(ctx context.Context) (string, error) {
	if s.base == nil {
		ws, err := s.ws.Sibling(ctx, s.t.Commit, "")
		if err != nil {
			return "", fmt.Errorf("check out %s to compare findings: %w", task.Short(s.t.Commit), err)
		}
		s.base = ws
	}
	return s.base.Dir, nil
}

// packageOf finds the module holding the file at abs and the package's
// relative path ("./x/y") in it; ok is false outside any module or in
// directories the go command ignores.
func (s *Session) packageOf(abs string) (mod, pkg string, ok bool) {
	dir := filepath.Dir(abs)
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			rel, err := filepath.Rel(d, dir)
			if err != nil {
				return "", "", false
			}
			for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
				if part == "testdata" || part == "vendor" || (part != "." && (strings.HasPrefix(part, "_") || strings.HasPrefix(part, "."))) {
					return "", "", false
				}
			}
			if rel == "." {
				return d, ".", true
			}
			return d, "./" + filepath.ToSlash(rel), true
		}
		if d == s.ws.Dir || d == filepath.Dir(d) || !strings.HasPrefix(d, s.ws.Dir) {
			return "", "", false
		}
	}
}
