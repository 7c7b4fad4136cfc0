package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/stream"
	"github.com/redfix/redfix/pkg/termsafe"
)

// parkedStreams names the streams whose messages can be parked.
func parkedStreams(cfg config.Config) map[string]stream.Config {
	return map[string]stream.Config{"reports": intakeConfig(cfg).StreamConfig(), "jobs": queueConfig(cfg).StreamConfig()}
}

// Replay lists or replays parked messages:
//
//	bot replay [--stream reports|jobs]            list (JSON lines), the count on stderr
//	bot replay --all | --id ID [--dry-run]        replay them all, or one
//	bot replay --task ID                          start task ID's failure group over
//
// It reads the NATS the bot uses, which must be configured: without one it
// would look at an empty embedded server and report nothing parked. It
// changes no stream's settings, and a server without the bot's streams is
// an error, not "0 parked". --list and --dry-run never replay.
func Replay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var name, id, taskID string
	var list, all, dryRun bool
	fs := newCommandLine("replay", stderr, os.Getenv)
	fs.StringVar(&name, "stream", "reports", "which stream's parked messages: reports or jobs")
	fs.StringVar(&id, "id", "", "replay only the message parked under this ID (a submission or job ID)")
	fs.BoolVar(&all, "all", false, "replay every parked message of the stream")
	fs.BoolVar(&list, "list", false, "list the parked messages as JSON lines, replaying nothing (the default without --all or --id)")
	fs.BoolVar(&dryRun, "dry-run", false, "list what --all or --id would replay, replaying nothing")
	fs.StringVar(&taskID, "task", "", "start the repair of this task's failure group over (a verdict or a failure that holds it), on the bot's NATS and Redis")
	if err := fs.parse(args); err != nil {
		return err
	}
	cfg, log, err := fs.load(stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	scfg, ok := parkedStreams(cfg)[name]
	if !ok {
		return Usage(fmt.Sprintf("replay: --stream %q: want reports or jobs", name))
	}
	if all && id != "" {
		return Usage("replay: --all and --id: choose one")
	}
	if taskID != "" && (all || id != "" || list || dryRun) {
		return Usage("replay: --task goes alone")
	}
	if cfg.NATS.URL == "" {
		return Usage("replay: no NATS server configured (nats.url in --config, or REDFIX_NATS_URL): replay reads the parked messages on the NATS the bot uses")
	}
	if taskID != "" {
		return replayTask(ctx, cfg, log, taskID, stdout)
	}
	sys := &System{log: log}
	defer sys.Close()
	js, err := sys.startNATS(ctx, cfg)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	st, err := stream.Bind(ctx, js, scfg, log.Named("replay"))
	if errors.Is(err, stream.ErrNotFound) {
		return fmt.Errorf("replay: NATS at %s: %w: is it the NATS the bot uses? (the bot creates its streams when it starts)", sys.NATSURL, err)
	}
	if err != nil {
		return fmt.Errorf("replay: NATS at %s: %w", sys.NATSURL, err)
	}
	where := fmt.Sprintf("%s (stream %s, parked on %s at %s)", name, scfg.Stream, st.Config().DeadStream, sys.NATSURL)

	ps, err := st.Parked(ctx)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	var selected []stream.Parked
	for _, p := range ps {
		if id == "" || p.MsgID == id {
			selected = append(selected, p)
		}
	}
	if id != "" && len(selected) == 0 {
		return fmt.Errorf("replay: nothing is parked under %q on %s; %d parked there", id, where, len(ps))
	}

	if list || dryRun || (!all && id == "") {
		// Parked reports and jobs carry the repositories' text.
		enc := json.NewEncoder(termsafe.NewJSONWriter(stdout))
		for _, p := range selected {
			if err := enc.Encode(p); err != nil {
				return err
			}
		}
		switch {
		case dryRun && (all || id != ""):
			fmt.Fprintf(stderr, "would replay %d parked on %s (dry run: nothing changed)\n", len(selected), where)
		case len(selected) == 0:
			fmt.Fprintf(stderr, "0 parked on %s\n", where)
		default:
			fmt.Fprintf(stderr, "%d parked on %s; replay them with --all, or one with --id ID\n", len(selected), where)
		}
		return nil
	}
	n, err := st.Replay(ctx, id)
	fmt.Fprintf(stdout, "replayed %d parked %s message(s)\n", n, name)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return nil
}
