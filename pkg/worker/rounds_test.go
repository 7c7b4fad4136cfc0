package worker

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/redfix/redfix/pkg/task"
)

// A task keeps each candidate's last rounds, the chosen candidate's first
// when there are too many in all, with patches, gate details and
// trajectories cut to their bounds.
func TestBoundRounds(t *testing.T) {
	t.Parallel()
	var rounds []task.Round
	for c := 1; c <= 6; c++ {
		for n := 1; n <= 4; n++ {
			rounds = append(rounds, task.Round{Candidate: c, N: n, Verdict: task.RoundRejected,
				Patch:      fmt.Sprintf("c%dr%d\n", c, n) + strings.Repeat("+x\n", MaxRoundPatch),
				Trajectory: strings.Repeat(`{"step":1}`+"\n", MaxRoundsTrajectory),
				Gates:      []task.Gate{{Name: "regression", Verdict: task.GateFail, Detail: strings.Repeat("d", 2*MaxGateDetail)}}})
		}
	}
	kept := BoundRounds(rounds, 6)
	var got []string
	trajectories := 0
	for _, r := range kept {
		got = append(got, fmt.Sprintf("%d.%d", r.Candidate, r.N))
		if n := utf8.RuneCountInString(r.Patch); n > MaxRoundPatch || !strings.HasPrefix(r.Patch, fmt.Sprintf("c%dr%d\n", r.Candidate, r.N)) || !strings.Contains(r.Patch, "characters omitted") {
			t.Errorf("round %d.%d: patch of %d characters, want its head within %d and the cut marked", r.Candidate, r.N, n, MaxRoundPatch)
		}
		if d := r.Gates[0].Detail; utf8.RuneCountInString(d) > MaxGateDetail {
			t.Errorf("round %d.%d: gate detail of %d characters", r.Candidate, r.N, len(d))
		}
		trajectories += utf8.RuneCountInString(r.Trajectory)
	}
	// Each candidate's last 3 rounds, 12 in all: the chosen (6) and the
	// first three; ordered by candidate and round.
	want := "1.2 1.3 1.4 2.2 2.3 2.4 3.2 3.3 3.4 6.2 6.3 6.4"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("kept %s, want %s", s, want)
	}
	if trajectories > MaxRoundsTrajectory {
		t.Errorf("trajectories hold %d characters in all, want at most %d", trajectories, MaxRoundsTrajectory)
	}
	// The rounds given are not changed.
	if len(rounds[0].Gates[0].Detail) != 2*MaxGateDetail {
		t.Error("BoundRounds cut the caller's gate detail")
	}

	// Within the bounds nothing is cut.
	small := []task.Round{{Candidate: 1, N: 1, Patch: "+a\n", Trajectory: "{}\n", Gates: []task.Gate{{Name: "oracle", Verdict: task.GateFail, Detail: "x"}}}, {Candidate: 1, N: 2, Patch: "+b\n"}}
	if k := BoundRounds(small, 1); len(k) != 2 || k[0].Patch != "+a\n" || k[0].Trajectory != "{}\n" || k[0].Gates[0].Detail != "x" || k[1].Patch != "+b\n" {
		t.Errorf("small rounds changed: %+v", k)
	}
	if BoundRounds(nil, 1) != nil {
		t.Error("no rounds should stay nil")
	}
}
