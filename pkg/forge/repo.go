package forge

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/redfix/redfix/pkg/repourl"
)

// RepoID is a repository's identity on its forge: the host that serves it
// and its full path there, every group and subgroup kept
// ("group/subgroup/name"), as the repository's URL writes them.
type RepoID struct {
	// Host is the host in lower case, with its port when it is not the
	// scheme's default ("github.com", "git.example:8443").
	Host string
	// Path is the full path without a leading or trailing "/" or ".git".
	Path string
}

// RepoOf is the identity of the repository at repoURL (any spelling
// repourl.Canonical reads: https, ssh, scp-like). A local path has none.
func RepoOf(repoURL string) (RepoID, error) {
	c, err := repourl.Canonical(repoURL)
	if err != nil {
		return RepoID{}, err
	}
	if repourl.IsLocal(c) {
		return RepoID{}, fmt.Errorf("%s is a local path, on no forge", c)
	}
	u, err := url.Parse(c)
	if err != nil {
		return RepoID{}, fmt.Errorf("%s: %w", c, err)
	}
	return RepoID{Host: u.Host, Path: strings.Trim(u.Path, "/")}, nil
}

// String is "host/path".
func (r RepoID) String() string { return r.Host + "/" + r.Path }

// IsZero reports whether r names no repository.
func (r RepoID) IsZero() bool { return r.Host == "" && r.Path == "" }

// Segments are the path's parts ("group", "subgroup", "name").
func (r RepoID) Segments() []string {
	if r.Path == "" {
		return nil
	}
	return strings.Split(r.Path, "/")
}

// Name is the path's last part: the repository's own name.
func (r RepoID) Name() string {
	s := r.Segments()
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// Namespace is the path without its last part: the owner, or the groups
// that hold the repository ("" for a path of one part).
func (r RepoID) Namespace() string {
	i := strings.LastIndex(r.Path, "/")
	if i < 0 {
		return ""
	}
	return r.Path[:i]
}

// Same reports whether r and o name the same repository: the same host
// and path, compared without case (as forges and DNS compare them).
func (r RepoID) Same(o RepoID) bool {
	return strings.EqualFold(r.Host, o.Host) && strings.EqualFold(r.Path, o.Path)
}
