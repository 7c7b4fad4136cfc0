package python

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
	sitterpython "github.com/tree-sitter/tree-sitter-python/bindings/go"
)

// tree is a file parsed with tree-sitter's Python grammar; close it. A
// file with syntax errors is still read: tree-sitter recovers, and the
// parts it understood are what the readers look at.
type tree struct {
	t   *sitter.Tree
	src []byte
}

func (t tree) root() *sitter.Node { return t.t.RootNode() }
func (t tree) close()             { t.t.Close() }

// parse parses src, ok false when tree-sitter cannot.
func parse(src []byte) (tree, bool) {
	parser := sitter.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(sitter.NewLanguage(sitterpython.Language())); err != nil {
		return tree{}, false
	}
	t := parser.Parse(src, nil)
	if t == nil {
		return tree{}, false
	}
	return tree{t, src}, true
}

// lineOf is the 1-based line n starts on.
func lineOf(n *sitter.Node) int { return int(n.StartPosition().Row) + 1 }

// walk calls fn on n and every named node below it, in order, skipping
// what is below a node fn returns false for.
func walk(n *sitter.Node, fn func(*sitter.Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		walk(n.NamedChild(i), fn)
	}
}
