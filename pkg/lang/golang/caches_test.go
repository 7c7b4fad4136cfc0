package golang

import (
	"context"
	"os/exec"
	"slices"
	"testing"
)

// Setup's registries are the host's module proxies and checksum database:
// every proxy of the list, the database at its name, or at the URL it
// names, and none when it is off.
func TestEndpointsAreTheProxiesAndTheChecksumDatabase(t *testing.T) {
	for _, c := range []struct {
		proxy, sumdb string
		want         []string
	}{
		{"https://a.example,https://b.example|direct", "sum.example+abc", []string{"https://a.example", "https://b.example", "direct", "https://sum.example"}},
		{"https://a.example", "sum.example+abc https://mirror.example/sumdb", []string{"https://a.example", "https://mirror.example/sumdb"}},
		{"off", "off", []string{"off"}},
		{"", "", nil},
	} {
		if got := endpoints(c.proxy, c.sumdb); !slices.Equal(got, c.want) {
			t.Errorf("GOPROXY=%q GOSUMDB=%q: endpoints %q, want %q", c.proxy, c.sumdb, got, c.want)
		}
	}
}

// The registries are asked of the go command with the environment a
// confined setup gets: the host's GOPROXY, then the checksum database.
func TestRegistriesAreWhatTheGoCommandSays(t *testing.T) {
	// The go command runs this test: it is here, and its absence is a
	// failure, not a skip.
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	t.Setenv("GOPROXY", "https://a.example,https://b.example")
	got := registries(context.Background())
	if len(got) < 2 || !slices.Equal(got[:2], []string{"https://a.example", "https://b.example"}) {
		t.Fatalf("registries %q, want the host's proxies first", got)
	}
}
