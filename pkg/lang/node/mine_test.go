package node

import "testing"

// A JavaScript test's failure to reach the network, in node's resolver and
// socket error codes and fetch's words; other failures are not.
func TestNetworkFailure(t *testing.T) {
	for text, want := range map[string]bool{
		"Error: getaddrinfo ENOTFOUND registry.example":             true,
		"Error: getaddrinfo EAI_AGAIN api.example":                  true,
		"Error: connect ECONNREFUSED 127.0.0.1:5432":                true,
		"Error: connect ENETUNREACH 10.0.0.1:443":                   true,
		"TypeError: fetch failed":                                   true,
		"AssertionError: expected 950 to be 1000":                   false,
		"Error: ENOENT: no such file or directory, open 'fetch.js'": false,
	} {
		if got := (Driver{}).NetworkFailure(text); got != want {
			t.Errorf("NetworkFailure(%q) = %v, want %v", text, got, want)
		}
	}
}
