package python

import "regexp"

// networkFailureRE recognises a Python test's failure caused by reaching
// for the network: the resolver's and sockets' words, and urllib's and
// requests'.
var networkFailureRE = regexp.MustCompile(`socket\.gaierror|Temporary failure in name resolution|Name or service not known|[Nn]etwork is unreachable|urlopen error|ConnectionRefusedError|Failed to establish a new connection`)

// NetworkFailure reports a failure's text that says a test reached for the
// network (pkg/bench asks for it: a fix whose tests need it is not mined).
func (Driver) NetworkFailure(text string) bool { return networkFailureRE.MatchString(text) }
