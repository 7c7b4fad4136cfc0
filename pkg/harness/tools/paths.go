package tools

import "context"

// PathRule is the repository's word on the paths redfix may change
// (repoconfig.Policy): ok, or the rule that refuses the path.
type PathRule interface {
	PathAllowed(path string) (ok bool, rule string)
}

type pathsKey struct{}

// WithPaths makes the episodes run with ctx refuse an edit of a path rule
// refuses, at once, with the rule: the gates would reject the patch for it
// anyway, and the model should not spend its turns on it.
func WithPaths(ctx context.Context, rule PathRule) context.Context {
	return context.WithValue(ctx, pathsKey{}, rule)
}

// pathsFrom is the rule WithPaths put in ctx, nil when none.
func pathsFrom(ctx context.Context) PathRule {
	r, _ := ctx.Value(pathsKey{}).(PathRule)
	return r
}
