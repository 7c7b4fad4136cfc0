package app

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
)

// Under log.format: json, a start-up that fails is one JSON line of the
// log (level error, the cause, no stack trace), and go-redis's own lines
// (its Sentinel client asking a Sentinel that is not there) are JSON too:
// no plain line among them for a log shipper to choke on. The error is
// marked logged, so the program prints no plain line of it either.
func TestStartUpFailureIsLoggedAsJSON(t *testing.T) {
	clearEnv(t)
	sentinel := "127.0.0.1:" + strconv.Itoa(testsvc.FreePort(t))
	for k, v := range map[string]string{
		"REDFIX_DATA_DIR": t.TempDir(), "REDFIX_HTTP_ADDR": "127.0.0.1:0", "REDFIX_STARTUP_WAIT": "2s", "REDFIX_LOG_FORMAT": "json",
		"REDFIX_NATS_URL": tcpNATS(t), "REDFIX_REDIS_SENTINEL_MASTER": "redfix", "REDFIX_REDIS_SENTINEL_ADDRS": sentinel,
		"REDFIX_SANDBOX": "off",
	} {
		t.Setenv(k, v)
	}
	for name, run := range startCommands {
		t.Run(strings.ReplaceAll(name, " ", "-"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var stdout, stderr lockedBuffer
			err := run(ctx, nil, &stdout, &stderr)
			var logged interface{ Logged() bool }
			if err == nil {
				t.Fatalf("%s started", name)
			}
			if !errors.As(err, &logged) || ExitCode(err) == 0 {
				t.Errorf("%s: %v (exit %d), want a failure marked logged", name, err, ExitCode(err))
			}
			var stopped, goRedis int
			for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Errorf("a plain line under log.format json: %q", line)
					continue
				}
				if m["msg"] == name+" stopped" {
					stopped++
					if m["level"] != "error" || !strings.Contains(m["error"].(string), "sentinel master redfix at "+sentinel) || m["stacktrace"] != nil {
						t.Errorf("the failure's line: %v", m)
					}
				}
				if m["logger"] == "go-redis" {
					goRedis++
				}
			}
			if stopped != 1 || goRedis == 0 {
				t.Errorf("%d lines of the failure (want 1), %d of go-redis (want some):\n%s", stopped, goRedis, stderr.String())
			}
		})
	}
}
