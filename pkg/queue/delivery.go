package queue

import (
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/stream"
)

// Delivery is one delivery of a job to a worker. Settle it exactly once
// with Ack, Nak, Term or Park; until then, InProgress (or KeepAlive) keeps
// the server from handing it to another worker after AckWait. Attempt,
// MaxDeliver, Enqueued and StreamSeq come from the stream's delivery.
type Delivery struct {
	Job job.Job
	*stream.Delivery
}

// ErrSettled is returned when a delivery is settled a second time.
var ErrSettled = stream.ErrSettled
