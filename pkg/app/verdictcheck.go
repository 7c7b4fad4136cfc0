package app

import (
	"github.com/redfix/redfix/pkg/commitcheck"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github/deliveries"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/worker"
)

// verdicts is the System's verdict check (pkg/commitcheck), on the forges
// that take it: GitHub as an App (GitHub refuses check runs to a plain
// token), as a check run; GitLab, as a commit status whose link leads to
// the fix; nil without either.
func (s *System) verdicts() *commitcheck.Check {
	var on []forge.Driver
	if s.GitHub != nil && s.GitHub.Clients().App() != nil {
		on = append(on, s.GitHub)
	}
	if s.GitLab != nil {
		on = append(on, s.GitLab)
	}
	if len(on) == 0 {
		return nil
	}
	return &commitcheck.Check{Forges: forge.New(on...), Store: s.Store, Log: s.log.Named("verdict")}
}

// triageVerdicts is v for triage's intake: a nil interface without a
// forge that takes verdicts.
func (s *System) triageVerdicts() triage.Verdicts {
	if v := s.verdicts(); v != nil {
		return v
	}
	return nil
}

// fixOutcomes rewrites the verdict's check run when a pull request is
// merged or closed: a nil interface without a forge that takes verdicts.
func (s *System) fixOutcomes() deliveries.Outcomes {
	if v := s.verdicts(); v != nil {
		return v
	}
	return nil
}

// workerTasks records the worker's tasks through next and, with a forge
// that takes verdicts, rewrites the verdict's check run when a task settles.
func (s *System) workerTasks(next worker.Tasks) worker.Tasks {
	if v := s.verdicts(); v != nil {
		return commitcheck.Tasks{Next: next, Check: v}
	}
	return next
}
