package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
)

// A submission travels on the stream as its body, stored as it came (a
// report's bytes as CI posted them, a forge's delivery's payload), with
// every other field (its envelope) as JSON in one header: not base64'd
// inside JSON, which made a report's message a third larger and was most
// of the cost of storing it. JetStream refuses headers over 64 KB: an
// envelope larger than maxEnvelope (a large parsed JUnit report) sends the
// submission whole as JSON instead, as the stream held before, and a
// message without the header is read that way.
const HeaderSubmission = "Redfix-Submission"

// maxEnvelope is the largest envelope that travels as a header.
const maxEnvelope = 32 << 10

// encode is s as a message's data and headers.
func encode(s Submission) ([]byte, nats.Header, error) {
	whole := func() ([]byte, nats.Header, error) {
		data, err := json.Marshal(s)
		if err != nil {
			return nil, nil, fmt.Errorf("encode submission %s: %w", s.ID, err)
		}
		return data, nil, nil
	}
	env := s
	body := env.Report
	env.Report = nil
	if s.IsEvent() {
		if len(s.Report) > 0 {
			return whole()
		}
		body, env.Payload = s.Payload, nil
	}
	head, err := json.Marshal(env)
	if err != nil {
		return nil, nil, fmt.Errorf("encode submission %s: %w", s.ID, err)
	}
	if len(head) > maxEnvelope {
		return whole()
	}
	// JSON escapes every control character but DEL, which header values
	// are not meant to hold (redfix's client and server take it; other
	// tools may not): inside a string, where alone it can stand, its
	// escape means the same.
	if bytes.IndexByte(head, 0x7f) >= 0 {
		head = bytes.ReplaceAll(head, []byte{0x7f}, []byte(`\u007f`))
	}
	return body, nats.Header{HeaderSubmission: []string{string(head)}}, nil
}

// Decode is the submission a message of the reports stream holds, in
// either encoding.
func Decode(data []byte, hdr nats.Header) (Submission, error) {
	var s Submission
	head := hdr.Get(HeaderSubmission)
	if head == "" {
		if err := json.Unmarshal(data, &s); err != nil {
			return Submission{}, fmt.Errorf("decode submission: %w", err)
		}
		return s, nil
	}
	if err := json.Unmarshal([]byte(head), &s); err != nil {
		return Submission{}, fmt.Errorf("decode submission header: %w", err)
	}
	switch {
	case len(data) == 0:
	case s.IsEvent():
		s.Payload = data
	default:
		s.Report = data
	}
	return s, nil
}
