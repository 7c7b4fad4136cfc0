package testrun

import (
	"iter"
	"math"
	"testing"
)

func lines(file string, ns ...int) iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		for _, n := range ns {
			if !yield(file, n) {
				return
			}
		}
	}
}

// A line that every failing test and no passing test runs ranks first, with
// Ochiai's score of 1; lines only passing tests run are left out.
func TestSpectrumRanksByOchiai(t *testing.T) {
	var s Spectrum
	s.Add(lines("calc.py", 1, 2, 5), true)
	s.Add(lines("calc.py", 1, 2, 5), true)
	s.Add(lines("calc.py", 1, 2, 9), false)
	s.Add(lines("calc.py", 1, 9), false)
	got := s.Suspects(0)
	if len(got) != 3 {
		t.Fatalf("suspects = %+v, want lines 5, 2 and 1", got)
	}
	if got[0].Line != 5 || got[0].Score != 1 || got[0].Failing != 2 || got[0].Passing != 0 {
		t.Errorf("first = %+v, want line 5 with score 1", got[0])
	}
	// Line 2: ef 2, ep 1 → 2/sqrt(2×3); line 1: ef 2, ep 2 → 2/sqrt(2×4).
	if got[1].Line != 2 || math.Abs(got[1].Score-2/math.Sqrt(6)) > 1e-9 {
		t.Errorf("second = %+v", got[1])
	}
	if got[2].Line != 1 || math.Abs(got[2].Score-2/math.Sqrt(8)) > 1e-9 {
		t.Errorf("third = %+v", got[2])
	}
	if top := s.Suspects(1); len(top) != 1 || top[0].Line != 5 {
		t.Errorf("Suspects(1) = %+v", top)
	}
	var none Spectrum
	none.Add(lines("calc.py", 1), false)
	if got := none.Suspects(0); len(got) != 0 {
		t.Errorf("no failing test, suspects %+v", got)
	}
}
