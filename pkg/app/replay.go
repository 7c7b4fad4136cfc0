package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/redfix/redfix/pkg/stream"
	"github.com/redfix/redfix/pkg/termsafe"
)

// parkedStreams names the streams whose messages can be parked.
func (s *System) parkedStreams() map[string]*stream.Stream {
	return map[string]*stream.Stream{"reports": s.Intake.Stream(), "jobs": s.Jobs.Stream()}
}

// Replay lists or replays parked messages: `bot replay [--stream reports|jobs] [--id ID] [--list]`.
func Replay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var name, id string
	var list bool
	cfg, log, err := common("replay", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&name, "stream", "reports", "which stream's parked messages: reports or jobs")
		fs.StringVar(&id, "id", "", "replay only the message parked under this ID (a submission or job ID)")
		fs.BoolVar(&list, "list", false, "list the parked messages as JSON lines instead of replaying them")
	})
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	sys, err := Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer sys.Close()
	st, ok := sys.parkedStreams()[name]
	if !ok {
		return Usage(fmt.Sprintf("replay: --stream %q: want reports or jobs", name))
	}
	if list {
		ps, err := st.Parked(ctx)
		if err != nil {
			return err
		}
		// Parked reports and jobs carry the repositories' text.
		enc := json.NewEncoder(termsafe.NewJSONWriter(stdout))
		for _, p := range ps {
			if id == "" || p.MsgID == id {
				if err := enc.Encode(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	n, err := st.Replay(ctx, id)
	fmt.Fprintf(stdout, "replayed %d parked %s message(s)\n", n, name)
	if err != nil {
		return err
	}
	if id != "" && n == 0 {
		return fmt.Errorf("replay: nothing is parked under %q on %s", id, name)
	}
	return nil
}
