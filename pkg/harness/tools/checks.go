package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/task"
)

// checksOf names the static checks an edit of rel is held to: its
// driver's, for a file of the driver's language.
func (s *Session) checksOf(rel string) string {
	if !s.env.Lang.IsSource(rel) {
		return "none for this file"
	}
	if n, ok := s.env.Lang.(ChecksNamer); ok {
		return n.ChecksName()
	}
	if named, ok := s.env.Lang.(interface{ Name() string }); ok {
		return "the " + named.Name() + " driver's checks"
	}
	return "the language driver's checks"
}

// diagnose runs the driver's static checks on an edited file of its
// language, in the workspace and, when they find anything, in a checkout
// of the task's commit. It returns the findings that the task's commit
// does not have (the edit's), empty when there are none, and how many
// findings were there before. Files of no language have none.
func (s *Session) diagnose(ctx context.Context, rel string) (fresh string, old []string, err error) {
	return s.diagnoseWith(ctx, s.env.Lang, rel)
}

// diagnoseWith runs the driver's checks on the edited file, in the
// workspace and in a checkout of the task's commit.
func (s *Session) diagnoseWith(ctx context.Context, l Language, rel string) (fresh string, old []string, err error) {
	if !l.IsSource(rel) {
		return "", nil, nil
	}
	head, err := l.Check(ctx, s.ws.Dir, []string{rel})
	if err != nil {
		return "", nil, fmt.Errorf("static analysis of %s: %w", rel, err)
	}
	if len(head) == 0 {
		return "", nil, nil
	}
	baseRoot, err := s.baseCheckout(ctx)
	if err != nil {
		return "", nil, err
	}
	var base []findings.Finding
	if _, err := os.Stat(filepath.Join(baseRoot, filepath.FromSlash(rel))); err == nil {
		if base, err = l.Check(ctx, baseRoot, []string{rel}); err != nil {
			return "", nil, fmt.Errorf("static analysis of %s at %s: %w", rel, task.Short(s.t.Commit), err)
		}
	}
	return newFindings(head, base)
}

// newFindings are the findings of head that base does not have, as the
// edit's observation shows them, and the texts of those that were there
// before.
func newFindings(head, base []findings.Finding) (string, []string, error) {
	news, old := findings.Split(head, base)
	texts := findings.Texts(news)
	if len(texts) > 40 {
		texts = append(texts[:40], fmt.Sprintf("… and %d more", len(texts)-40))
	}
	return trimLines(strings.Join(texts, "\n"), 60), findings.Texts(old), nil
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
