package app

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/redfix/redfix/pkg/sandbox"
)

// Seed is `worker seed`: the sandbox's seed made ahead of the first
// repository that needs it (in an image's build, or before a test suite
// whose every test makes new repositories).
func Seed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newCommandLine("seed", stderr, os.Getenv)
	if err := fs.parse(args); err != nil {
		return err
	}
	cfg, log, err := fs.load(stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	ctx, st, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	box := sandbox.From(ctx)
	if box == nil || !st.Confined {
		return fmt.Errorf("seed: the sandbox does not confine here (%s): there is nothing to seed", st)
	}
	dir, err := box.Seed(ctx)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if dir == "" {
		fmt.Fprintln(stdout, "seed: off (sandbox.seed_cache)")
		return nil
	}
	fmt.Fprintf(stdout, "seed: %s\n", dir)
	return nil
}
