package app

import (
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github/deliveries"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/verdict"
	"github.com/redfix/redfix/pkg/worker"
)

// verdicts is the System's verdict check run (pkg/verdict), on the forges
// that take it: GitHub as an App (GitHub refuses check runs to a plain
// token); nil without one.
func (s *System) verdicts() *verdict.Check {
	if s.GitHub == nil || s.GitHub.Clients().App() == nil {
		return nil
	}
	return &verdict.Check{Forges: forge.New(s.GitHub), Store: s.Store, Log: s.log.Named("verdict")}
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
		return verdict.Tasks{Next: next, Check: v}
	}
	return next
}
