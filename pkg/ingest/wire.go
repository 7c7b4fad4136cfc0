package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
)

// A submission travels on the stream as the report's bytes, stored as CI
// posted them, with every other field (its envelope) as JSON in one
// header: not base64'd inside JSON, which made a message a third larger
// and was most of the cost of storing a report. A message without the
// header is a submission encoded whole as JSON, as the stream held before,
// and is read the same.
const HeaderSubmission = "Redfix-Submission"

// encode is s as a message's data and headers.
func encode(s Submission) ([]byte, nats.Header, error) {
	rep := s.Report
	s.Report = nil
	env, err := json.Marshal(s)
	if err != nil {
		return nil, nil, fmt.Errorf("encode submission %s: %w", s.ID, err)
	}
	// JSON escapes every control character but DEL, which header values
	// are not meant to hold (redfix's client and server take it; other
	// tools may not): inside a string, where alone it can stand, its
	// escape means the same.
	if bytes.IndexByte(env, 0x7f) >= 0 {
		env = bytes.ReplaceAll(env, []byte{0x7f}, []byte(`\u007f`))
	}
	return rep, nats.Header{HeaderSubmission: []string{string(env)}}, nil
}

// Decode is the submission a message of the reports stream holds, in
// either encoding.
func Decode(data []byte, hdr nats.Header) (Submission, error) {
	var s Submission
	env := hdr.Get(HeaderSubmission)
	if env == "" {
		if err := json.Unmarshal(data, &s); err != nil {
			return Submission{}, fmt.Errorf("decode submission: %w", err)
		}
		return s, nil
	}
	if err := json.Unmarshal([]byte(env), &s); err != nil {
		return Submission{}, fmt.Errorf("decode submission header: %w", err)
	}
	if len(data) > 0 {
		s.Report = data
	}
	return s, nil
}
