package app

import (
	"github.com/redfix/redfix/pkg/gh"
	"github.com/redfix/redfix/pkg/gh/deliveries"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/verdict"
	"github.com/redfix/redfix/pkg/worker"
)

// verdicts is the System's verdict check run (pkg/verdict); nil without
// GitHub, or with a plain token, to which GitHub refuses check runs (only
// Apps write them).
func (s *System) verdicts() *verdict.Check {
	if s.GitHub == nil || s.GitHub.App() == nil {
		return nil
	}
	return &verdict.Check{Checks: gh.Checks{Clients: s.GitHub}, Store: s.Store, Log: s.log.Named("verdict")}
}

// triageVerdicts is v for triage's intake: a nil interface without
// GitHub.
func (s *System) triageVerdicts() triage.Verdicts {
	if v := s.verdicts(); v != nil {
		return v
	}
	return nil
}

// fixOutcomes rewrites the verdict's check run when a pull request is
// merged or closed: a nil interface without GitHub.
func (s *System) fixOutcomes() deliveries.Outcomes {
	if v := s.verdicts(); v != nil {
		return v
	}
	return nil
}

// workerTasks records the worker's tasks through next and, with GitHub,
// rewrites the verdict's check run when a task settles.
func (s *System) workerTasks(next worker.Tasks) worker.Tasks {
	if v := s.verdicts(); v != nil {
		return verdict.Tasks{Next: next, Check: v}
	}
	return next
}
