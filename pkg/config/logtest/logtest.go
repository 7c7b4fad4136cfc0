// Package logtest checks the lines redfix's JSON logger writes, for the
// log shippers that read them: each line one JSON object, no key twice in
// an object (encoding/json keeps the last of two; Elasticsearch refuses
// the line).
package logtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
)

// Buffer is what a logger writes, safe for the logger's concurrent writes.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// Bytes is a copy of what was written so far.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// JSON is the process's JSON logger as the configuration builds it (level
// debug), writing to the returned buffer.
func JSON(t testing.TB) (*zap.Logger, *Buffer) {
	t.Helper()
	buf := &Buffer{}
	log, err := config.Log{Level: "debug", Format: "json"}.Build(buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	return log, buf
}

// DuplicateKeys returns the keys that occur more than once in one object of
// the JSON value data, at any depth, each as its path ("job.attempt"). It
// walks the tokens, since decoding into a map keeps only one of them.
func DuplicateKeys(data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var dups []string
	if err := walk(dec, "", &dups); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return dups, nil
}

// walk reads one value from dec, recording duplicate keys of its objects.
func walk(dec *json.Decoder, path string, dups *[]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key := k.(string)
			p := key
			if path != "" {
				p = path + "." + key
			}
			if seen[key] {
				*dups = append(*dups, p)
			}
			seen[key] = true
			if err := walk(dec, p, dups); err != nil {
				return err
			}
		}
		_, err = dec.Token() // }
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walk(dec, fmt.Sprintf("%s[%d]", path, i), dups); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ]
		return err
	}
	return nil
}

// Lines checks every line of data: a JSON object with no key twice. It
// fails t for each line that is not, and returns the lines decoded.
func Lines(t testing.TB, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		dups, err := DuplicateKeys([]byte(line))
		if err != nil {
			t.Errorf("log line %d is not JSON (%v): %s", i+1, err, line)
			continue
		}
		if len(dups) > 0 {
			t.Errorf("log line %d repeats %v: %s", i+1, dups, line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("log line %d is not a JSON object (%v): %s", i+1, err, line)
			continue
		}
		out = append(out, m)
	}
	return out
}
