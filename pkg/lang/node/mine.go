package node

import "regexp"

// networkFailureRE recognises a JavaScript test's failure caused by
// reaching for the network: node's resolver and socket error codes, and
// fetch's.
var networkFailureRE = regexp.MustCompile(`getaddrinfo (ENOTFOUND|EAI_AGAIN)|connect (ECONNREFUSED|ENETUNREACH|EHOSTUNREACH)|fetch failed`)

// NetworkFailure reports a failure's text that says a test reached for the
// network (pkg/bench asks for it: a fix whose tests need it is not mined).
func (Driver) NetworkFailure(text string) bool { return networkFailureRE.MatchString(text) }
