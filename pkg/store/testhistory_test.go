package store

import (
	"context"
	"testing"
)

func testHistory(t *testing.T, s *Store) {
	ctx := context.Background()
	runs, failures, err := s.TestHistory(ctx, "pkg.TestNew")
	if err != nil || runs != 0 || failures != 0 {
		t.Fatalf("history of an unknown test: %d runs %d failures %v", runs, failures, err)
	}
	for _, failed := range []bool{true, false, true, false, false} {
		if err := s.RecordRun(ctx, "pkg.TestFlaky/sub", failed); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordRun(ctx, "pkg.TestOther", true); err != nil {
		t.Fatal(err)
	}
	runs, failures, err = s.TestHistory(ctx, "pkg.TestFlaky/sub")
	if err != nil || runs != 5 || failures != 2 {
		t.Fatalf("history: %d runs %d failures %v, want 5 and 2", runs, failures, err)
	}
	runs, failures, err = s.TestHistory(ctx, "pkg.TestOther")
	if err != nil || runs != 1 || failures != 1 {
		t.Fatalf("history of another test: %d runs %d failures %v, want 1 and 1", runs, failures, err)
	}
}
