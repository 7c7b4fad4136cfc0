package harness

import (
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/lang/node"
)

func TestIsPackageArgNode(t *testing.T) {
	for a, want := range map[string]bool{
		"src/price.test.ts": true, "test/cart.test.js": true, "price.spec.mjs": true, "src/": true, "test": true,
		"src/price.test.ts::price > applies the discount": false,
		"price > applies the discount":                    false,
		"applies the discount":                            false,
	} {
		if got := isPackageArg(a); got != want {
			t.Errorf("isPackageArg(%q) = %v, want %v", a, got, want)
		}
	}
}

// The policy is told how a JavaScript repository's tests are named, and
// what an edit's feedback is; Go's descriptions stay as they are.
func TestSpecsForNode(t *testing.T) {
	log := zaptest.NewLogger(t)
	js := New(Config{}, nil, testRunner(), nil, log).WithLanguage(node.Driver{}).specs()
	for i, sp := range Specs() {
		d := js[i].Description
		switch sp.Name {
		case ActRunTests:
			if !strings.Contains(d, `"src/price.test.ts::price > applies the discount"`) || strings.Contains(d, "import/path") {
				t.Errorf("JavaScript's run_tests: %q", d)
			}
		case ActEdit:
			if strings.Contains(d, "gofmt") || !strings.Contains(d, "static checks") {
				t.Errorf("JavaScript's edit: %q", d)
			}
		case ActSearchMethod:
			if !strings.Contains(d, "arrow functions") {
				t.Errorf("JavaScript's search_method: %q", d)
			}
		}
		for _, goWord := range []string{"gofmt", "go vet", "import path", "Go "} {
			if strings.Contains(d, goWord) && d != sp.Description {
				t.Errorf("JavaScript's %s speaks of Go: %q", sp.Name, d)
			}
		}
	}
	// An edit's feedback names the checks it ran.
	s := &session{h: New(Config{}, nil, testRunner(), nil, log).WithLanguage(node.Driver{})}
	for rel, want := range map[string]string{"README.md": "none for this file", "src/price.ts": "the node driver's checks", "x.go": "gofmt, go build, go vet"} {
		if got := s.checksOf(rel); got != want {
			t.Errorf("checksOf(%s) = %q, want %q", rel, got, want)
		}
	}
}
