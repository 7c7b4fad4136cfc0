package config

// Review configures how redfix works with the people who review its pull
// requests: the /redfix commands in comments and the revisions a review
// asks for.
type Review struct {
	// MaxRevisions bounds the revisions one pull request gets (a review
	// requesting changes, or /redfix revise); past it, redfix says so in
	// one comment and does nothing more. 0: no revisions.
	MaxRevisions int `yaml:"max_revisions"`
	// Commands acts on /redfix commands in comments (on by default); off,
	// comments are not read at all.
	Commands bool `yaml:"commands"`
}
