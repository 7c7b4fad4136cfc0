package server

import (
	"io"
	"net/http"
	"sync"
)

// Report bodies are read into buffers kept between requests. A report is
// stored (copied into the NATS connection's buffer) before its request is
// answered, so its buffer is free again then; a new buffer for each report
// (allocated, cleared, collected) cost about 15 µs of CPU a report more
// (docs/evaluation.md, "Ingest throughput").
var bodies = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody is the largest buffer kept: a rare large report is read
// into a buffer of its own, not held on to by a pool slot afterwards.
const maxPooledBody = 256 << 10

// readBody reads a report's body, at most MaxReportBytes: into one buffer
// of its announced length when it has one (not a growing one copied at
// every doubling), else as it comes. release gives the buffer back once
// nothing uses the body any more; not calling it is always safe.
func readBody(w http.ResponseWriter, r *http.Request) (body []byte, release func(), err error) {
	rd := http.MaxBytesReader(w, r.Body, MaxReportBytes)
	keep := func() {}
	if r.ContentLength <= 0 || r.ContentLength > MaxReportBytes {
		body, err = io.ReadAll(rd)
		return body, keep, err
	}
	n := int(r.ContentLength)
	var buf []byte
	release = keep
	if n > maxPooledBody {
		buf = make([]byte, n)
	} else {
		p := bodies.Get().(*[]byte)
		if cap(*p) < n {
			*p = make([]byte, 0, max(n, 8<<10))
		}
		buf = (*p)[:n]
		release = func() { bodies.Put(p) }
	}
	if _, err := io.ReadFull(rd, buf); err != nil {
		release()
		return nil, keep, err
	}
	// Nothing past the announced length (the server stops there anyway).
	return buf, release, nil
}
