package triage

import (
	"runtime"
	"testing"
)

func TestTriageSlotsBoundedByCPU(t *testing.T) {
	t.Parallel()
	n := runtime.NumCPU()
	for _, c := range []struct{ configured, want int }{{0, n}, {1, 1}, {n, n}, {n + 5, n}, {-1, n}} {
		if got := slots(c.configured); got != c.want {
			t.Errorf("slots(%d) = %d, want %d", c.configured, got, c.want)
		}
	}
}
