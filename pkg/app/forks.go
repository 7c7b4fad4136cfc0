package app

import (
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/gitlab"
)

// forkOptIn is one forge's central opt-in to its change requests from
// forks, and the setting that holds it.
type forkOptIn struct {
	on      bool
	setting string
}

// forkOptIns are the central opt-ins to change requests from forks, one
// per forge (triage.ForkOptIn): the driver that serves a repository
// chooses its setting. A repository no configured forge serves (a report
// posted to the API with a fork) follows github.forks, as it always did.
type forkOptIns struct {
	forges *forge.Forges
	by     map[string]forkOptIn // by driver name
	other  forkOptIn
}

func newForkOptIns(cfg config.Config, forges *forge.Forges) forkOptIns {
	gh := forkOptIn{on: cfg.GitHub.Forks, setting: "github.forks"}
	return forkOptIns{forges: forges, other: gh, by: map[string]forkOptIn{
		github.Name: gh,
		gitlab.Name: {on: cfg.GitLab.Forks, setting: "gitlab.forks"},
	}}
}

// ForksHandled says whether the central configuration handles repo's
// change requests from forks, and the setting that says so.
func (f forkOptIns) ForksHandled(repo string) (bool, string) {
	o := f.other
	if d, _, err := f.forges.ForURL(repo); err == nil {
		if by, ok := f.by[d.Name()]; ok {
			o = by
		}
	}
	return o.on, o.setting
}
