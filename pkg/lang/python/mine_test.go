package python

import "testing"

// A Python test's failure to reach the network, in the resolver's, the
// sockets' and the HTTP libraries' words; other failures are not.
func TestNetworkFailure(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"socket.gaierror: [Errno -3] Temporary failure in name resolution":                       true,
		"urllib.error.URLError: <urlopen error [Errno 111] Connection refused>":                  true,
		"requests.exceptions.ConnectionError: Failed to establish a new connection: [Errno 101]": true,
		"ConnectionRefusedError: [Errno 111] Connection refused":                                 true,
		"OSError: [Errno 101] Network is unreachable":                                            true,
		"AssertionError: assert 3 == 4":                                                          false,
		"KeyError: 'network'":                                                                    false,
	} {
		if got := (Driver{}).NetworkFailure(text); got != want {
			t.Errorf("NetworkFailure(%q) = %v, want %v", text, got, want)
		}
	}
}
