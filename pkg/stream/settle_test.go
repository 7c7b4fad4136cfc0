package stream

import (
	"errors"
	"fmt"
	"testing"
)

// Permanent classes an error without changing what it says or wraps, and
// the class survives wrapping: handlers wrap, Settle reads the class.
func TestPermanentClassSurvivesWrapping(t *testing.T) {
	base := errors.New("no such repository")
	p := Permanent(base)
	if p.Error() != "no such repository" || !errors.Is(p, base) || !errors.Is(p, ErrPermanent) {
		t.Fatalf("Permanent(%v) = %q; is base %v, is permanent %v", base, p, errors.Is(p, base), errors.Is(p, ErrPermanent))
	}
	wrapped := fmt.Errorf("triage acme/x: %w", p)
	if !errors.Is(wrapped, ErrPermanent) || !errors.Is(wrapped, p) {
		t.Fatalf("the class is lost in %q", wrapped)
	}
	if errors.Is(fmt.Errorf("timeout: %w", base), ErrPermanent) {
		t.Fatal("an unclassed error is permanent")
	}
	if Permanent(nil) != nil {
		t.Fatal("Permanent(nil) is not nil")
	}
}
