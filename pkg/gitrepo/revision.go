package gitrepo

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadRevision marks a revision that could be read as an option or that
// no commit, branch or tag is spelled as.
var ErrBadRevision = errors.New("not a revision")

// CheckRevision accepts what names a commit in reports and requests — a
// hash, a branch or tag name, HEAD with ~ or ^ suffixes — and refuses
// anything git could take for an option or a range: a leading '-',
// whitespace, control characters, "..", ":" and the other characters git
// forbids in ref names.
func CheckRevision(rev string) error {
	switch {
	case rev == "":
		return fmt.Errorf("%w: empty", ErrBadRevision)
	case len(rev) > 255:
		return fmt.Errorf("%w: longer than 255 bytes", ErrBadRevision)
	case strings.HasPrefix(rev, "-"):
		return fmt.Errorf("%w: %q starts with '-'", ErrBadRevision, rev)
	case strings.Contains(rev, ".."), strings.Contains(rev, "@{"), strings.Contains(rev, "//"):
		return fmt.Errorf("%w: %q", ErrBadRevision, rev)
	}
	for _, r := range rev {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`:?*[\`, r) || r > 0x7e {
			return fmt.Errorf("%w: %q holds %q", ErrBadRevision, rev, r)
		}
	}
	return nil
}

func checkRevisions(revs ...string) error {
	for _, r := range revs {
		if err := CheckRevision(r); err != nil {
			return err
		}
	}
	return nil
}
