package bench

import (
	"github.com/redfix/redfix/pkg/task"
)

// Evidence is what each gate said of an episode's patch, as the pull
// request's evidence shows it: its verdict, its detail (what it ran and
// found) and its time.
type Evidence []task.Gate

// takeGates records the gates' verdicts on the sample's patch: each as
// "name:verdict", those that failed it, and each gate's evidence.
func (s *Sample) takeGates(gates []task.Gate) {
	for _, g := range gates {
		s.Gates = append(s.Gates, g.Name+":"+g.Verdict)
		if g.Verdict == task.GateFail {
			s.RejectedBy = append(s.RejectedBy, g.Name)
		}
		g.Detail = clipText(g.Detail, maxGateDetail)
		s.Evidence = append(s.Evidence, g)
	}
}

// maxGateDetail bounds a gate's detail in the results: a failing test's
// output can be long, and the results file holds every episode.
const maxGateDetail = 4000
