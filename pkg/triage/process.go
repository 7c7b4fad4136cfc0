package triage

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// Process triages a failing CI run, group by group, and returns what it did
// with each. A package that did not build is a group of its own, triaged
// the same way: its build is reproduced and bisected, and its task's
// failure is the compiler's message. An error means triage could not finish (git,
// the store, the queue, a cancelled context): the groups it had not decided
// are released, and the outcomes so far are returned with the error, so that
// the report can be triaged again.
//
// At most Config.MaxGroupsPerReport groups are triaged, one outcome each.
// The groups are taken in order, packages that did not build first, then
// the tests' groups as the report lists them; when there are more than the
// cap and the store can tell, the groups that another task already has go
// last, so that the cap goes to failures nobody works on yet (a group that
// a task has would only be dropped as its duplicate). The groups past the
// cap are neither claimed nor run: they are one dropped outcome whose
// reason says how many there are (ReasonBeyondCap) and whose task lists
// the first of them; a later report of the same failures gets to them.
func (t *Triage) Process(ctx context.Context, in Input) ([]Outcome, error) {
	if in.Repo == "" || in.Commit == "" {
		return nil, fmt.Errorf("triage: input needs a repository and a commit")
	}
	log := t.log.With(zap.String("repo", in.Repo), zap.String("commit", in.Commit))
	if in.Fork != "" {
		log = log.With(zap.String("fork", in.Fork))
		// A fork's commits are not the repository's: the setups of their
		// runs fill caches of their own, which no trusted run reads.
		ctx = sandbox.WithUntrusted(ctx)
	}
	drivers := fingerprintDrivers(t.cfg.Languages, nil)
	groups := GroupFailures(in.Repo, in.Report.Failures, drivers...)
	if len(in.Report.Incomplete) > 0 {
		// Tests cut off with their package are not failures: only those
		// that ended failing are triaged.
		log.Warn("report is incomplete", zap.Strings("packages", in.Report.Incomplete), zap.Int("not_run", len(in.Report.NotRun)))
	}
	// Packages that do not build come first: their tests could not run.
	groups = append(GroupFailures(in.Repo, in.Report.BuildErrors, drivers...), groups...)
	var outs []Outcome
	if len(groups) == 0 {
		return outs, nil
	}
	log.Info("triage report", zap.Int("failures", len(in.Report.Failures)), zap.Int("build_errors", len(in.Report.BuildErrors)), zap.Int("groups", len(groups)))

	p := &process{t: t, in: in}
	defer p.close()
	groups = p.newFirst(ctx, groups)
	for i, g := range groups {
		if i == t.cfg.MaxGroupsPerReport {
			o, err := p.beyondCap(ctx, groups[i:], log)
			if err != nil {
				return outs, fmt.Errorf("triage %s at %s: %w", in.Repo, task.Short(in.Commit), err)
			}
			return append(outs, o), nil
		}
		o, err := p.group(ctx, g, log)
		if err != nil {
			return outs, fmt.Errorf("triage %s at %s: %w", in.Repo, task.Short(in.Commit), err)
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// process is one Process call: its workspace is made on the first group
// that needs one and shared by the rest.
type process struct {
	t  *Triage
	in Input
	ws *workspace.Workspace
	// blames are the culprits found for earlier groups, and the blame
	// groups this report's tasks claimed.
	blames      []task.Bisection
	blameClaims []blameClaim
	// The default branch's head, asked once.
	headAsked              bool
	headBranch, headCommit string
	headErr                error
	// The report's language driver and the runner of its tests, chosen
	// once (see language); langReason stops every group when the
	// repository cannot run: dropped (no driver knows it), or failed when
	// setupFailed (its setup failed).
	lang        lang.Driver
	runner      Runner
	langChosen  bool
	langReason  string
	setupFailed bool
	// tests are the repository's test settings every run used, as the
	// task shows them (testenv.Settings.String; "" none).
	tests string
	// The repository's policy at the commit, read once (see repoPolicy).
	policy     *repoconfig.Policy
	policyRead bool
	policyAt   string
}

func (p *process) close() {
	if p.ws != nil {
		_ = p.ws.Close()
	}
}

func (p *process) workspace(ctx context.Context) (*workspace.Workspace, error) {
	if p.ws == nil {
		open := workspace.Open
		if p.t.cfg.Checkouts != nil {
			open = p.t.cfg.Checkouts.Open
		}
		ws, err := open(ctx, p.in.Repo, p.in.Commit, p.t.cfg.WorkDir)
		if err != nil {
			return nil, err
		}
		p.ws = ws
		return ws, nil
	}
	return p.ws, p.ws.Reset(ctx)
}
