//go:build !redfix_trusting

package untrusted

// Trusting turns the trust boundaries off: files of a checkout are read
// following links and unsized, redfix's git takes the checkout's own git
// metadata, and a patch is the whole work tree's change. It is true only in
// a build made with the redfix_trusting tag, which exists for one purpose:
// the hostile-repository tests (test/hostile) run their corpus against such
// a build to show that each of their checks fails when the boundary it
// checks is switched off. Never ship such a build.
const Trusting = false
