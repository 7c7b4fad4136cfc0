package config

import (
	"bytes"
	"strings"
	"testing"
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
