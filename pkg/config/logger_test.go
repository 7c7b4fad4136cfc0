package config

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Every warning and error reaches a JSON log, however many repeat: the
// sampling applies to debug and info lines only.
func TestJSONLogKeepsEveryWarningAndError(t *testing.T) {
	var buf bytes.Buffer
	log, err := Log{Level: "info", Format: "json"}.Build(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 500 {
		log.Warn("report rejected")
	}
	for range 300 {
		log.Error("triage failed")
	}
	for range 1000 {
		log.Info("report accepted")
	}
	_ = log.Sync()
	out := buf.String()
	if n := strings.Count(out, `"report rejected"`); n != 500 {
		t.Errorf("%d of 500 warnings logged", n)
	}
	if n := strings.Count(out, `"triage failed"`); n != 300 {
		t.Errorf("%d of 300 errors logged", n)
	}
	if n := strings.Count(out, `"report accepted"`); n >= 1000 || n < 100 {
		t.Errorf("%d of 1000 identical info lines logged; want them sampled, the first 100 kept", n)
	}
}

func TestConsoleLogHonoursTheLevel(t *testing.T) {
	var buf bytes.Buffer
	log, err := Log{Level: "warn", Format: "console"}.Build(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("quiet")
	log.Warn("loud")
	_ = log.Sync()
	if strings.Contains(buf.String(), "quiet") || !strings.Contains(buf.String(), "loud") {
		t.Fatalf("level warn logged:\n%s", buf.String())
	}
}

// A JSON line's ts is an RFC 3339 time in UTC (log shippers read it as a
// date), the time the line was written.
func TestJSONLogTimeIsRFC3339(t *testing.T) {
	var buf bytes.Buffer
	log, err := Log{Level: "info", Format: "json"}.Build(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Truncate(time.Millisecond)
	log.Info("report accepted")
	after := time.Now()
	_ = log.Sync()
	var line struct {
		TS any `json:"ts"`
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	ts, ok := line.TS.(string)
	if !ok {
		t.Fatalf("ts is %T %v, want an RFC 3339 string", line.TS, line.TS)
	}
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		t.Fatalf("ts %q: %v", ts, err)
	}
	if !strings.HasSuffix(ts, "Z") || at.Before(before) || at.After(after) {
		t.Errorf("ts %q, want the time of the line in UTC, between %s and %s", ts, before.UTC(), after.UTC())
	}
}
