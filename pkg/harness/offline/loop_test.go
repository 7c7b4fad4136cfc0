package offline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/workspace"
)

// runEpisode drives the policy with a small stand-in for the harness loop:
// the tools the offline policy uses, observations shaped like the
// harness's. (Swap for harness.New(...).Run once the loop exists.)
func runEpisode(t *testing.T, ctx context.Context, ws *workspace.Workspace, tk task.Task, p harness.Policy, maxSteps int) (harness.Result, []harness.Step) {
	t.Helper()
	ep := &harness.Episode{Task: tk, MaxSteps: maxSteps}
	res := harness.Result{Stop: "budget"}
	runner := testrun.Runner{Timeout: 2 * time.Minute}
	for len(ep.Steps) < maxSteps {
		a, err := p.Next(ctx, ep)
		if err != nil {
			t.Fatalf("policy: %v", err)
		}
		obs := tool(t, ctx, ws, tk, runner, a)
		if a.Name == harness.ActRunTests && obs.Tests != nil {
			res.TestsPassed = obs.Tests.OK
		}
		ep.Steps = append(ep.Steps, harness.Step{N: len(ep.Steps) + 1, Policy: p.Name(), Action: a, Observation: obs, Started: time.Now()})
		if a.Name == harness.ActExit {
			var args harness.ExitArgs
			_ = json.Unmarshal(a.Args, &args)
			res.Summary, res.Stop = args.Summary, "exit"
			break
		}
	}
	res.Steps = len(ep.Steps)
	patch, err := ws.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res.Patch = patch
	return res, ep.Steps
}

func tool(t *testing.T, ctx context.Context, ws *workspace.Workspace, tk task.Task, runner testrun.Runner, a harness.Action) harness.Observation {
	t.Helper()
	fail := func(format string, args ...any) harness.Observation {
		return harness.Observation{Content: fmt.Sprintf(format, args...), IsError: true}
	}
	switch a.Name {
	case harness.ActExit:
		return harness.Observation{Content: "bye"}
	case harness.ActGetTaskDetails:
		b, _ := json.MarshalIndent(tk, "", "  ")
		return harness.Observation{Content: string(b)}
	case harness.ActGetDiffDetails:
		c, err := ws.Repo.Show(ctx, tk.Bisection.Blame)
		if err != nil {
			return fail("%v", err)
		}
		return harness.Observation{Content: fmt.Sprintf("commit %s\nAuthor: %s\n\n    %s\n\n%s", c.SHA, c.Author, c.Subject, c.Diff)}
	case harness.ActReadFile, harness.ActGoToLine:
		var args struct {
			Path      string `json:"path"`
			StartLine int    `json:"start_line"`
			EndLine   int    `json:"end_line"`
			Line      int    `json:"line"`
		}
		_ = json.Unmarshal(a.Args, &args)
		abs, err := ws.Abs(args.Path)
		if err != nil {
			return fail("%v", err)
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return fail("%v", err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		lo, hi := 1, len(lines)
		if args.Line > 0 {
			lo, hi = max(1, args.Line-25), min(len(lines), args.Line+25)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s (lines %d-%d of %d)\n", args.Path, lo, hi, len(lines))
		for i := lo; i <= hi; i++ {
			fmt.Fprintf(&b, "%6d\t%s\n", i, lines[i-1])
		}
		return harness.Observation{Content: b.String()}
	case harness.ActFindFile:
		var args harness.FindFileArgs
		_ = json.Unmarshal(a.Args, &args)
		var hits []string
		_ = filepath.WalkDir(ws.Dir, func(p string, d os.DirEntry, err error) error {
			if d != nil && d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if ok, _ := filepath.Match(args.Pattern, filepath.Base(p)); ok {
				hits = append(hits, ws.Rel(p))
			}
			return nil
		})
		return harness.Observation{Content: strings.Join(hits, "\n")}
	case harness.ActSearchMethod:
		var args harness.NameArgs
		_ = json.Unmarshal(a.Args, &args)
		re := regexp.MustCompile(`^func\s+(\([^)]*\)\s*)?` + regexp.QuoteMeta(args.Name) + `\(`)
		var hits []string
		_ = filepath.WalkDir(ws.Dir, func(p string, d os.DirEntry, err error) error {
			if d != nil && d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if !strings.HasSuffix(p, ".go") {
				return nil
			}
			data, _ := os.ReadFile(p)
			for i, l := range strings.Split(string(data), "\n") {
				if re.MatchString(l) {
					hits = append(hits, fmt.Sprintf("%s:%d: %s", ws.Rel(p), i+1, l))
				}
			}
			return nil
		})
		return harness.Observation{Content: strings.Join(hits, "\n")}
	case harness.ActRunTests:
		var args harness.RunTestsArgs
		_ = json.Unmarshal(a.Args, &args)
		ids := args.Tests
		if len(ids) == 0 {
			ids = tk.Tests()
		}
		out, err := runner.Run(ctx, ws.Dir, ids, 1)
		if err != nil {
			return fail("%v", err)
		}
		tr := &harness.TestsResult{OK: out.OK(), Passed: out.Passed, Failed: out.Failed, Build: out.Build}
		return harness.Observation{Content: out.Summary(), Tests: tr, IsError: !out.OK()}
	case harness.ActEdit:
		var args harness.EditArgs
		_ = json.Unmarshal(a.Args, &args)
		abs, err := ws.Abs(args.Path)
		if err != nil {
			return fail("%v", err)
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return fail("%v", err)
		}
		out, err := applyBlocks(string(data), args.Blocks)
		if err != nil {
			return harness.Observation{Content: err.Error(), IsError: true, Edit: &harness.EditResult{}}
		}
		if err := os.WriteFile(abs, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		var diag []string
		vet := exec.CommandContext(ctx, "go", "vet", "./...")
		vet.Dir = ws.Dir
		if b, err := vet.CombinedOutput(); err != nil {
			diag = append(diag, string(b))
		}
		if b, _ := exec.CommandContext(ctx, "gofmt", "-l", abs).CombinedOutput(); len(b) > 0 {
			diag = append(diag, "gofmt: "+string(b))
		}
		return harness.Observation{Content: "applied", Edit: &harness.EditResult{Applied: true, Diagnostics: strings.Join(diag, "\n")}}
	}
	return fail("unknown action %s", a.Name)
}

func applyBlocks(content, blocks string) (string, error) {
	parts := strings.Split(blocks, "<<<<<<< SEARCH\n")
	if len(parts) < 2 {
		return "", fmt.Errorf("no SEARCH/REPLACE block")
	}
	for _, p := range parts[1:] {
		search, rest, ok := strings.Cut(p, "=======\n")
		replace, _, ok2 := strings.Cut(rest, ">>>>>>> REPLACE")
		if !ok || !ok2 {
			return "", fmt.Errorf("malformed block")
		}
		if n := strings.Count(content, search); n != 1 {
			return "", fmt.Errorf("SEARCH matches %d times", n)
		}
		content = strings.Replace(content, search, replace, 1)
	}
	return content, nil
}
