package triage

import "runtime"

// slots is how many reports triage works on at once: the configured
// number, or the CPUs, never more than the CPUs (each runs tests).
func slots(configured int) int {
	n := runtime.NumCPU()
	if configured <= 0 || configured > n {
		return n
	}
	return configured
}
