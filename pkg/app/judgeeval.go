package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/termsafe"
)

// JudgeEval is `worker judge-eval`: the configured judge on a labelled set
// of patches, scored as precision and recall on the accept class.
func JudgeEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return judgeEvalCommand(ctx, args, os.Getenv, stdout, stderr)
}

func judgeEvalCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var (
		data   stringList
		asJSON bool
	)
	fs := newCommandLine("judge-eval", stderr, getenv)
	fs.Var(&data, "data", "a labelled set: one JSON case a line (see pkg/judge/testdata/labelled*.jsonl); repeatable, figures per set and overall")
	fs.BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	if err := fs.parse(args); err != nil {
		return asUsage("judge-eval", err)
	}
	cfg, log, err := fs.load(stderr)
	if err != nil {
		return asUsage("judge-eval", err)
	}
	defer func() { _ = log.Sync() }()
	if len(data) == 0 {
		return Usage("judge-eval: --data is required")
	}
	if !cfg.LLM.Enabled() {
		return Usage("judge-eval: no model configured (REDFIX_MODEL and REDFIX_LLM_BASE_URL or OPENAI_API_KEY)")
	}
	cases, err := loadSets(data)
	if err != nil {
		return Usage("judge-eval: " + err.Error())
	}
	client, err := llm.NewOpenAI(llm.Config{BaseURL: cfg.LLM.BaseURL, APIKey: cfg.LLM.APIKey, Model: cfg.LLM.Model, Timeout: cfg.LLM.Timeout})
	if err != nil {
		return Machinery(fmt.Errorf("model client: %w", err))
	}
	j := judge.NewCommittee(client, cfg.Judge.Votes, log)
	progress := func(r judge.Result) {
		if !asJSON {
			fmt.Fprintf(stderr, "%-28s label %-6s judge %s\n", termsafe.String(r.ID), termsafe.String(r.Label), r.Verdict)
		}
	}
	rep, err := j.Evaluate(ctx, cases, progress)
	if err != nil {
		return Machinery(err)
	}
	if asJSON {
		enc := json.NewEncoder(termsafe.NewJSONWriter(stdout))
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	_, err = io.WriteString(termsafe.NewWriter(stdout), rep.String())
	return err
}

// loadSets reads every labelled set, each case marked with its file's name;
// a case id used in two sets is an error, as in one.
func loadSets(paths []string) ([]judge.Case, error) {
	var all []judge.Case
	from := map[string]string{}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		cases, err := judge.LoadCases(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for i := range cases {
			if prev, ok := from[cases[i].ID]; ok {
				return nil, fmt.Errorf("%s: id %s already used in %s", path, cases[i].ID, prev)
			}
			from[cases[i].ID] = path
			cases[i].Set = path
		}
		all = append(all, cases...)
	}
	return all, nil
}
