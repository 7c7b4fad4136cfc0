package ingest

import (
	"context"

	"github.com/redfix/redfix/pkg/stream"
)

// RunSlots is Run with up to slots submissions handled at once (1 when
// slots < 1): a burst of red runs is triaged in parallel, bounded.
func (in *Intake) RunSlots(ctx context.Context, slots int, handle Handler) error {
	return in.s.Consume(ctx, max(1, slots), func(ctx context.Context, d *stream.Delivery) {
		in.handle(ctx, d, handle)
	})
}
