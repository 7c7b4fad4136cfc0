package stream

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// The nats-server versions redfix runs on.
var (
	// MinServerVersion is the oldest: the JetStream API that the client
	// uses (consumers created by name, a stream's next message by subject)
	// came with 2.9.0. Open refuses an older server.
	MinServerVersion = ServerVersion{2, 9, 0}
	// termReasonVersion is the first to read a termination's reason: an
	// older server drops a "+TERM reason" as an acknowledgement it does not
	// know, and the message comes back after AckWait. Below it Term sends
	// a plain +TERM.
	termReasonVersion = ServerVersion{2, 10, 0}
)

// ServerVersion is a nats-server's major, minor and patch version.
type ServerVersion struct{ Major, Minor, Patch int }

func (v ServerVersion) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Less reports whether v is older than w.
func (v ServerVersion) Less(w ServerVersion) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

// ParseServerVersion reads a version as a server announces it: "2.9.10",
// "v2.10.22", "2.11.0-beta.1".
func ParseServerVersion(s string) (ServerVersion, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(t, "-+"); i >= 0 {
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	if len(parts) != 3 {
		return ServerVersion{}, fmt.Errorf("nats-server version %q: want major.minor.patch", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return ServerVersion{}, fmt.Errorf("nats-server version %q: want major.minor.patch", s)
		}
		n[i] = v
	}
	return ServerVersion{n[0], n[1], n[2]}, nil
}

// CheckServer refuses a NATS server older than MinServerVersion, naming
// the version found and the minimum. nc must be connected.
func CheckServer(nc *nats.Conn) (ServerVersion, error) {
	found := nc.ConnectedServerVersion()
	if found == "" {
		return ServerVersion{}, errors.New("NATS: not connected, so the server's version is unknown")
	}
	v, err := ParseServerVersion(found)
	if err != nil {
		return ServerVersion{}, fmt.Errorf("NATS server %s: %w", nc.ConnectedUrlRedacted(), err)
	}
	if v.Less(MinServerVersion) {
		return v, fmt.Errorf("NATS server %s is nats-server %s: redfix needs %s or later (JetStream enabled)", nc.ConnectedUrlRedacted(), found, MinServerVersion)
	}
	return v, nil
}

// termReasons reports whether the server nc is connected to reads a
// termination's reason; false when unknown.
func termReasons(nc *nats.Conn) bool {
	v, err := ParseServerVersion(nc.ConnectedServerVersion())
	return err == nil && !v.Less(termReasonVersion)
}
