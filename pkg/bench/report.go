package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/redfix/redfix/pkg/harness"
)

// Summary is the bench's totals over the tasks that could be replayed.
type Summary struct {
	Policy string `json:"policy"`
	K      int    `json:"k"`
	Tasks  int    `json:"tasks"`  // replayed
	Errors int    `json:"errors"` // could not be replayed (not in the rates)
	// Solved1 and SolvedK count the tasks the first episode solved and
	// that one of K episodes solved; SR1 and SRK are their shares.
	Solved1 int     `json:"solved_at_1"`
	SolvedK int     `json:"solved_at_k"`
	SR1     float64 `json:"sr_at_1"`
	SRK     float64 `json:"sr_at_k"`
	// RevertOffered counts the tasks no episode fixed where one found that
	// undoing the culprit passes, and the revert solves the task.
	RevertOffered int `json:"revert_offered"`
	// Episodes counts every episode; Published those the gates and the
	// judge let through, PublishedSolved those of them that solve the task.
	// Precision is PublishedSolved ÷ Published (absent when nothing was
	// published).
	Episodes        int      `json:"episodes"`
	Published       int      `json:"published"`
	PublishedSolved int      `json:"published_solved"`
	Precision       *float64 `json:"precision,omitempty"`
	// SolvedUnpublished are right patches the gates or the judge held back.
	SolvedUnpublished int `json:"solved_unpublished"`
	NoPatch           int `json:"no_patch"`
	// RejectedBy counts episodes by the gates that rejected them.
	RejectedBy map[string]int `json:"rejected_by"`
	// Golden counts patches by their comparison with the golden fix.
	Golden map[string]int `json:"golden"`
	// TriedBefore is the mean number of candidate patches the solved
	// episodes tested before the one that solved them (absent when none
	// solved).
	TriedBefore *float64 `json:"tried_before_mean,omitempty"`
	// Totals over every episode.
	Steps   int     `json:"steps"`
	Tokens  int     `json:"tokens"`
	Calls   int     `json:"model_calls"`
	CostUSD float64 `json:"cost_usd"`
	Seconds float64 `json:"seconds"`
}

// Summarize totals the results.
func Summarize(policy string, k int, results []Result) Summary {
	s := Summary{Policy: policy, K: k, RejectedBy: map[string]int{}, Golden: map[string]int{}}
	for _, r := range results {
		if r.Error != "" {
			s.Errors++
			continue
		}
		s.Tasks++
		if r.Solved1 {
			s.Solved1++
		}
		if r.SolvedK {
			s.SolvedK++
		} else if r.RevertOffered {
			s.RevertOffered++
		}
		s.Seconds += r.Seconds
		for _, e := range r.Samples {
			s.Episodes++
			s.Steps += e.Steps
			s.Tokens += e.Tokens
			s.Calls += e.Calls
			s.CostUSD += e.CostUSD
			if e.Published {
				s.Published++
				if e.Solved {
					s.PublishedSolved++
				}
			} else if e.Solved {
				s.SolvedUnpublished++
			}
			if e.Patch == "" {
				s.NoPatch++
			}
			for _, g := range e.RejectedBy {
				s.RejectedBy[g]++
			}
			s.Golden[e.Golden]++
		}
	}
	if s.Tasks > 0 {
		s.SR1 = float64(s.Solved1) / float64(s.Tasks)
		s.SRK = float64(s.SolvedK) / float64(s.Tasks)
	}
	if s.Published > 0 {
		p := float64(s.PublishedSolved) / float64(s.Published)
		s.Precision = &p
	}
	if m, ok := meanTriedBefore(results); ok {
		s.TriedBefore = &m
	}
	return s
}

// WriteTable writes the results as a table, one task a row, then the
// totals.
func WriteTable(w io.Writer, results []Result, s Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "task\tlines\tSR@1\tSR@%d\tpublished\tsteps\ttried before\ttokens\tcost\twall\trejected by\tvs golden\n", s.K)
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\terror\t\t\t\t\t\t\t%.0fs\t\t\n", r.ID, r.LinesChanged, r.Seconds)
			continue
		}
		var steps, tokens, pub, pubSolved int
		var cost float64
		rejected := map[string]int{}
		golden := map[string]int{}
		for _, e := range r.Samples {
			steps += e.Steps
			tokens += e.Tokens
			cost += e.CostUSD
			if e.Published {
				pub++
				if e.Solved {
					pubSolved++
				}
			}
			for _, g := range e.RejectedBy {
				rejected[g]++
			}
			golden[e.Golden]++
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d/%d (%d right)\t%d\t%s\t%d\t$%.4f\t%.0fs\t%s\t%s\n",
			r.ID, r.LinesChanged, yesNo(r.Solved1), answerK(r), pub, len(r.Samples), pubSolved,
			steps, triedColumn(r), tokens, cost, r.Seconds, counts(rejected), counts(golden))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(w, "%s could not be replayed: %s\n", r.ID, oneLine(r.Error, 300))
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", s.Line())
	return err
}

// Line is the summary in a few lines of text.
func (s Summary) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "policy %s, %d tasks", s.Policy, s.Tasks)
	if s.Errors > 0 {
		fmt.Fprintf(&b, " (%d more could not be replayed)", s.Errors)
	}
	fmt.Fprintf(&b, ": SR@1 %s (%d), SR@%d %s (%d)", pct(s.SR1), s.Solved1, s.K, pct(s.SRK), s.SolvedK)
	if s.RevertOffered > 0 {
		fmt.Fprintf(&b, "; %d more answered by a revert (only undoing the culprit passes)", s.RevertOffered)
	}
	b.WriteString("\n")
	prec := "n/a (nothing published)"
	if s.Precision != nil {
		prec = pct(*s.Precision)
	}
	fmt.Fprintf(&b, "published %d of %d episodes; precision %s (%d right); %d right patches held back by the gates or the judge; %d episodes without a patch\n",
		s.Published, s.Episodes, prec, s.PublishedSolved, s.SolvedUnpublished, s.NoPatch)
	if s.Episodes > 0 {
		n := float64(s.Episodes)
		fmt.Fprintf(&b, "per episode: %.1f steps, %.0f tokens, %.1f model calls, $%.4f; %.0fs of wall time in all\n",
			float64(s.Steps)/n, float64(s.Tokens)/n, float64(s.Calls)/n, s.CostUSD/n, s.Seconds)
	}
	if s.TriedBefore != nil {
		fmt.Fprintf(&b, "candidates tried before the right one: %.1f per solved episode\n", *s.TriedBefore)
	}
	fmt.Fprintf(&b, "rejected by: %s; against the golden fix: %s", counts(s.RejectedBy), counts(s.Golden))
	return b.String()
}

// answerK is the task's SR@K cell: solved, answered by a revert, or not.
func answerK(r Result) string {
	if !r.SolvedK && r.RevertOffered {
		return "revert"
	}
	return yesNo(r.SolvedK)
}

func yesNo(b bool) string {
	if b {
		return "solved"
	}
	return "-"
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// counts is "a 2, b 1", largest first; "-" when empty.
func counts(m map[string]int) string {
	var keys []string
	for k, v := range m {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "-"
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// WriteJSON writes the summary and every task's result as one JSON object.
func WriteJSON(w io.Writer, results []Result, s Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Summary Summary  `json:"summary"`
		Tasks   []Result `json:"tasks"`
	}{s, results})
}

// WriteHTML writes the report to path: the totals, a row per task, and
// each episode with its gates, its patch, the golden fix and its
// trajectory, step by step, with a link to the trajectory's file.
// resultsDir is the results file's directory, where trajectories are.
func WriteHTML(path, resultsDir string, results []Result, tasks []Task, s Summary) error {
	golden := map[string]string{}
	for _, t := range tasks {
		golden[t.ID] = t.Golden
	}
	type step struct {
		N                          int
		Action, Args, Thought, Obs string
		Error                      bool
	}
	type episode struct {
		Sample
		Verdict string
		Link    string
		Steps   []step
	}
	type row struct {
		Result
		Anchor   string
		Golden   string
		Tried    string
		Episodes []episode
	}
	base := filepath.Dir(path)
	var rows []row
	for _, r := range results {
		rw := row{Result: r, Anchor: "task-" + safeName(r.ID), Golden: golden[r.ID], Tried: triedColumn(r)}
		for _, e := range r.Samples {
			ep := episode{Sample: e, Verdict: sampleVerdict(e)}
			if e.Trajectory != "" {
				file := filepath.Join(resultsDir, filepath.FromSlash(e.Trajectory))
				if rel, err := filepath.Rel(base, file); err == nil {
					ep.Link = filepath.ToSlash(rel)
				}
				if data, err := os.ReadFile(file); err == nil {
					sc := bufio.NewScanner(bytes.NewReader(data))
					sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
					for sc.Scan() {
						var st harness.Step
						if json.Unmarshal(sc.Bytes(), &st) != nil || st.Action.Name == "" {
							continue
						}
						ep.Steps = append(ep.Steps, step{N: st.N, Action: st.Action.Name, Args: string(st.Action.Args),
							Thought: st.Action.Thought, Obs: clipText(st.Observation.Content, 4000), Error: st.Observation.IsError})
					}
				}
			}
			rw.Episodes = append(rw.Episodes, ep)
		}
		rows = append(rows, rw)
	}
	var buf bytes.Buffer
	if err := reportTmpl.Execute(&buf, struct {
		S    Summary
		Line string
		Rows []row
	}{s, s.Line(), rows}); err != nil {
		return fmt.Errorf("render the report: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + "\n… (" + fmt.Sprint(len(s)-n) + " bytes left out) …\n" + s[len(s)-n/2:]
}

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": pct, "yesNo": yesNo, "secs": func(ms int64) float64 { return float64(ms) / 1000 },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>redfix bench: {{.S.Policy}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;white-space:pre-wrap}
.solved{color:#075}.unsolved{color:#a30}.err{color:#a30}
details{margin:.4em 0}
</style></head><body>
<h1>redfix bench</h1>
<pre>{{.Line}}</pre>
<table>
<tr><th>task</th><th>fix</th><th>lines</th><th>SR@1</th><th>SR@{{.S.K}}</th><th>tried before</th><th>episodes</th></tr>
{{range .Rows}}<tr>
<td><a href="#{{.Anchor}}">{{.ID}}</a></td><td>{{.Subject}}</td><td>{{.LinesChanged}}</td>
{{if .Error}}<td colspan="4" class="err">could not be replayed: {{.Error}}</td>{{else}}
<td>{{yesNo .Solved1}}</td><td>{{yesNo .SolvedK}}</td><td>{{.Tried}}</td>
<td>{{range .Episodes}}<div>#{{.N}} {{.Verdict}}{{if .Link}} · <a href="{{.Link}}">trajectory</a>{{end}}</div>{{end}}</td>{{end}}
</tr>{{end}}
</table>
{{range .Rows}}
<h2 id="{{.Anchor}}">{{.ID}}</h2>
<p>{{.Subject}}{{if .Fix}} (fix <code>{{.Fix}}</code>){{end}}; tests: {{range .Tests}}<code>{{.}}</code> {{end}}</p>
{{if .Error}}<p class="err">could not be replayed: {{.Error}}</p>{{end}}
{{range .Episodes}}
<h3>episode {{.N}}: <span class="{{if .Solved}}solved{{else}}unsolved{{end}}">{{.Verdict}}</span></h3>
<p>{{.Steps | len}} steps shown of {{.Sample.Steps}}; stopped by {{.Stop}}; {{.PatchesTested}} candidate patch(es) tested, {{.TriedBefore}} before the final one; {{.Tokens}} tokens, ${{printf "%.4f" .CostUSD}}, {{printf "%.0f" .Seconds}}s.
{{if .Reason}}Outcome: {{.Reason}}.{{end}} {{if .Error}}<span class="err">Error: {{.Error}}</span>{{end}}
{{if .Score}}Score: {{.Score}}.{{end}} Gates: {{range .Gates}}<code>{{.}}</code> {{end}}
{{if .Link}}<a href="{{.Link}}">trajectory.jsonl</a>{{end}}</p>
{{if .Evidence}}<details open><summary>the gates' evidence</summary><table>
<tr><th>gate</th><th>verdict</th><th>time</th><th>evidence</th></tr>
{{range .Evidence}}<tr><td>{{.Name}}</td><td class="{{if eq .Verdict "fail"}}err{{end}}">{{.Verdict}}</td><td>{{if .ElapsedMS}}{{printf "%.1f" (secs .ElapsedMS)}} s{{end}}</td><td><pre>{{.Detail}}</pre></td></tr>
{{end}}</table></details>{{end}}
{{if .Patch}}<details><summary>patch (against the golden fix: {{.Golden}})</summary><pre>{{.Patch}}</pre></details>{{end}}
{{if .Steps}}<details><summary>trajectory</summary>
{{range .Steps}}<p><b>{{.N}}. {{.Action}}</b> <code>{{.Args}}</code>{{if .Thought}}<br><i>{{.Thought}}</i>{{end}}</p><pre{{if .Error}} class="err"{{end}}>{{.Obs}}</pre>{{end}}
</details>{{end}}
{{end}}
{{if .Golden}}<details><summary>the golden fix</summary><pre>{{.Golden}}</pre></details>{{end}}
{{end}}
</body></html>
`))
