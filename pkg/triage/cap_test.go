package triage

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// claimsStore is a memStore that tells who holds a group, as the Redis
// store does.
type claimsStore struct{ *memStore }

func (s claimsStore) GroupClaim(_ context.Context, fp string) (string, time.Duration, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, ok := s.groups[fp]
	return owner, time.Minute, ok, nil
}

// A report with more failing groups than the cap: the first groups are
// triaged (here: each test passes when it is run, so each is dropped as not
// reproduced), the others are one dropped outcome that says how many, with
// nothing run or claimed for them. The next report of the same failures
// puts the groups that tasks already hold last and gets to the others.
func TestProcessCapsGroupsPerReport(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	tests := []string{"TestA", "TestB", "TestC", "TestD", "TestE"}
	src := "package capped\n\nimport \"testing\"\n"
	var failures []task.Failure
	for _, name := range tests {
		src += fmt.Sprintf("\nfunc %s(t *testing.T) {}\n", name)
		failures = append(failures, task.Failure{Package: "example.com/capped", Test: name, Message: name + " is wrong"})
	}
	f := bisecttest.NewRepo(t)
	sha := f.Commit("capped", map[string]string{"go.mod": "module example.com/capped\n\ngo 1.22\n", "capped_test.go": src})
	store := claimsStore{newMemStore()}
	tr := New(store, &memQueue{}, nil, Config{Languages: goOnly, Reruns: 1, MaxGroupsPerReport: 2, WorkDir: t.TempDir()}, nil)
	received := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	in := Input{Repo: f.Dir, Commit: sha, Report: report.Result{Failures: failures}, Submission: "report-1", Received: received}

	check := func(outs []Outcome, triaged, beyond []string) {
		t.Helper()
		if len(outs) != len(triaged)+1 {
			t.Fatalf("%d outcomes, want %d triaged and one beyond the cap: %+v", len(outs), len(triaged), outs)
		}
		for i, name := range triaged {
			if o := outs[i]; !slices.Equal(o.Tests, []string{"example.com/capped." + name}) || ReasonClass(o.Reason) != ReasonNotReproduced {
				t.Errorf("outcome %d = %v %q, want %s not reproduced", i, o.Tests, o.Reason, name)
			}
		}
		last := outs[len(outs)-1]
		want := fmt.Sprintf("the report has %d more failing groups (%d failures) beyond the cap of 2 per report: not triaged (triage.max_groups_per_report)", len(beyond), len(beyond))
		if last.Status != task.StatusDropped || last.Reason != want || ReasonClass(last.Reason) != ReasonBeyondCap || last.TestRuns != 0 {
			t.Errorf("last outcome = %+v, want dropped with %q", last, want)
		}
		var ids []string
		for _, name := range beyond {
			ids = append(ids, "example.com/capped."+name)
		}
		if !slices.Equal(last.Tests, ids) {
			t.Errorf("beyond the cap: tests %v, want %v", last.Tests, ids)
		}
		saved := store.tasks[last.TaskID]
		if saved.Status != task.StatusDropped || saved.Reason != want || len(saved.Failures) != len(beyond) {
			t.Errorf("the dropped task of the groups beyond the cap = %+v", saved)
		}
	}

	outs, err := tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	check(outs, []string{"TestA", "TestB"}, []string{"TestC", "TestD", "TestE"})
	for _, name := range tests {
		runs, claimed := store.runs["example.com/capped."+name][0], false
		for fp := range store.groups {
			claimed = claimed || fp == Fingerprint(f.Dir, failures[slices.Index(tests, name)])
		}
		if triaged := name == "TestA" || name == "TestB"; (runs > 0) != triaged || claimed != triaged {
			t.Errorf("%s: %d runs recorded, claimed %v; want runs and a claim only for the triaged groups", name, runs, claimed)
		}
	}

	// The same failures in the next report: the groups the first report's
	// tasks hold go last.
	in.Submission, in.Received = "report-2", received.Add(time.Hour)
	outs, err = tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	check(outs, []string{"TestC", "TestD"}, []string{"TestE", "TestA", "TestB"})
}
