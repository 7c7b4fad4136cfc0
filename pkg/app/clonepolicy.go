package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testenv"
	"github.com/redfix/redfix/pkg/triage"
)

// clonePolicy is the local clone's policy at commit as a worker reads it:
// its .redfix.yaml laid on the central configuration of cfg. The one-shot
// commands that run a clone's tests (worker repair, worker validate, bot
// triage) run them with its test settings, as the service does; each line
// it says (the settings found, or why the file was not used) goes to say.
// An invalid file is said and the central configuration applies, as for a
// worker.
func clonePolicy(ctx context.Context, cfg config.Config, log *zap.Logger, clone, commit string, say func(string)) (repoconfig.Policy, error) {
	pol, err := NewRepoPolicies(cfg, forge.New(), nil, log).Load(ctx, clone, commit)
	var inv *repoconfig.InvalidError
	switch {
	case errors.As(err, &inv):
		say(err.Error() + "; the central configuration applies")
	case err != nil:
		return pol, fmt.Errorf("the repository's policy at %s: %w", task.Short(commit), err)
	}
	if !pol.Tests.IsZero() {
		say(fmt.Sprintf("test settings (%s): %s", pol.Source, pol.Tests))
	}
	return pol, nil
}

// sayTo writes each line clonePolicy says to w, on one line of at most
// 300 bytes.
func sayTo(w io.Writer) func(string) {
	return func(s string) { fmt.Fprintln(w, clip.OneLine(s, 300)) }
}

// withTests is langs giving each driver it chooses the test settings
// (lang.Configure), as triage and the workers do.
func withTests(langs triage.Languages, settings testenv.Settings) triage.Languages {
	return configuredLanguages{Languages: langs, tests: settings}
}
