package worker

import (
	"slices"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/task"
)

// The bounds of the rounds a task keeps, in characters.
const (
	// MaxRoundsPerCandidate: each candidate keeps its last rounds.
	MaxRoundsPerCandidate = 3
	// MaxRounds bounds the rounds kept in all.
	MaxRounds = 12
	// MaxRoundPatch bounds each round's patch.
	MaxRoundPatch = 16 << 10
	// MaxRoundsTrajectory is what the rounds' trajectories share.
	MaxRoundsTrajectory = 128 << 10
	// MaxGateDetail bounds each gate's detail in a round.
	MaxGateDetail = 4 << 10
)

// BoundRounds is what a task keeps of rounds: each candidate's last
// MaxRoundsPerCandidate rounds, at most MaxRounds in all (the chosen
// candidate's first, then the others in order), ordered by candidate and
// round; each patch cut to MaxRoundPatch characters and each gate's detail
// to MaxGateDetail, the trajectories sharing MaxRoundsTrajectory. What is
// cut loses its middle, with a marker saying how much (package clip).
func BoundRounds(rounds []task.Round, chosen int) []task.Round {
	byCand := map[int][]task.Round{}
	var order []int
	for _, r := range rounds {
		if _, ok := byCand[r.Candidate]; !ok {
			order = append(order, r.Candidate)
		}
		byCand[r.Candidate] = append(byCand[r.Candidate], r)
	}
	slices.Sort(order)
	if i := slices.Index(order, chosen); i > 0 {
		order = append([]int{chosen}, slices.Delete(order, i, i+1)...)
	}
	var kept []task.Round
	for _, c := range order {
		rs := byCand[c]
		n := min(len(rs), MaxRoundsPerCandidate, MaxRounds-len(kept))
		kept = append(kept, rs[len(rs)-n:]...)
	}
	slices.SortStableFunc(kept, func(a, b task.Round) int {
		if a.Candidate != b.Candidate {
			return a.Candidate - b.Candidate
		}
		return a.N - b.N
	})
	if len(kept) == 0 {
		return nil
	}
	share := MaxRoundsTrajectory / len(kept)
	for i := range kept {
		r := &kept[i]
		r.Patch = clip.Middle(r.Patch, MaxRoundPatch)
		r.Trajectory = clip.Middle(r.Trajectory, share)
		gates := make([]task.Gate, len(r.Gates))
		for j, g := range r.Gates {
			g.Detail = clip.Middle(g.Detail, MaxGateDetail)
			gates[j] = g
		}
		if len(gates) > 0 {
			r.Gates = gates
		}
	}
	return kept
}
