//go:build redfix_trusting

package untrusted

// Trusting: see trusting.go. This build has the boundaries off.
const Trusting = true
