package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// blobHeadroom is what a message needs besides the report: the
// submission's other fields and the headers.
const blobHeadroom = 64 << 10

// openBlobs creates (or binds) the object store that holds reports too
// large for one message.
func openBlobs(ctx context.Context, js jetstream.JetStream, cfg Config) (jetstream.ObjectStore, error) {
	os, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:      cfg.Stream + "_BLOBS",
		Description: "redfix test reports larger than the server's max_payload, referenced from their submission",
		Storage:     cfg.Storage,
		Replicas:    max(cfg.Replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("create or update object store %s_BLOBS: %w", cfg.Stream, err)
	}
	return os, nil
}

// MaxMessageReport is the largest report that travels inside its message;
// a larger one goes to the object store. It follows the server's
// max_payload.
func (in *Intake) MaxMessageReport() int {
	mp := int(in.s.JetStream().Conn().MaxPayload())
	if mp <= blobHeadroom {
		return 0
	}
	// The report travels as it is, after its envelope (encode).
	return mp - blobHeadroom
}

// stash moves s's report to the object store when the message would not
// fit, leaving a reference behind.
func (in *Intake) stash(ctx context.Context, s *Submission) error {
	if len(s.Report) <= in.MaxMessageReport() {
		return nil
	}
	if _, err := in.blobs.PutBytes(ctx, s.ID, s.Report); err != nil {
		return fmt.Errorf("store the report of submission %s (%d bytes) in the object store: %w", s.ID, len(s.Report), err)
	}
	s.ReportObject, s.Report = s.ID, nil
	return nil
}

// fetch puts a stashed report back into s.
func (in *Intake) fetch(ctx context.Context, s *Submission) error {
	if s.ReportObject == "" {
		return nil
	}
	data, err := in.blobs.GetBytes(ctx, s.ReportObject)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("%w: the report object %s of submission %s is gone", ErrInvalid, s.ReportObject, s.ID)
	}
	if err != nil {
		return fmt.Errorf("read the report object %s of submission %s: %w", s.ReportObject, s.ID, err)
	}
	s.Report = data
	return nil
}

// dropBlob deletes a stashed report once its submission was triaged.
func (in *Intake) dropBlob(ctx context.Context, s Submission) error {
	for _, name := range []string{s.ReportObject, s.ParsedObject} {
		if name == "" {
			continue
		}
		if err := in.blobs.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return fmt.Errorf("delete the report object %s: %w", name, err)
		}
	}
	return nil
}
