package judge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/redfix/redfix/pkg/task"
)

// Case is one labelled patch of a calibration set, a line of JSON.
type Case struct {
	ID string `json:"id"`
	// Label is the verdict a careful reviewer gives: "accept" or "reject".
	Label string `json:"label"`
	// Kind says what sort of patch it is (honest, special-case,
	// hard-negative, …), for reading the results.
	Kind    string `json:"kind,omitempty"`
	Package string `json:"package"`
	Test    string `json:"test"`
	Message string `json:"message"`
	Output  string `json:"output,omitempty"`
	// TestSource is the failing test's function (and the tables it uses).
	TestSource   string      `json:"test_source"`
	BlameSubject string      `json:"blame_subject,omitempty"`
	BlameDiff    string      `json:"blame_diff,omitempty"`
	Patch        string      `json:"patch"`
	Code         []Change    `json:"code,omitempty"`
	Summary      string      `json:"summary,omitempty"`
	Gates        []task.Gate `json:"gates,omitempty"`
	// Why explains the label, for people reading the set.
	Why string `json:"why,omitempty"`
	// Set names the set the case came from (its file), for figures per
	// set; it is not part of a case's line.
	Set string `json:"-"`
}

// Input is the case as the judge sees it.
func (c Case) Input() Input {
	t := task.Task{
		ID:       "eval-" + c.ID,
		Failures: []task.Failure{{Package: c.Package, Test: c.Test, Message: c.Message, Output: c.Output}},
	}
	if c.BlameSubject != "" || c.BlameDiff != "" {
		t.Bisection = task.Bisection{Blame: "blame-of-" + c.ID, Subject: c.BlameSubject}
	}
	in := Input{Task: t, Patch: c.Patch, BlameDiff: c.BlameDiff, Summary: c.Summary, Code: c.Code, Gates: c.Gates}
	if c.TestSource != "" {
		in.Tests = []Source{{Name: c.Test, Text: c.TestSource}}
	}
	return in
}

// LoadCases reads a calibration set: one Case per line, blank lines and
// lines starting with # ignored. A line that is not a valid case is an error
// naming it.
func LoadCases(r io.Reader) ([]Case, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var cases []Case
	ids := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var c Case
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		switch {
		case c.ID == "":
			return nil, fmt.Errorf("line %d: no id", n)
		case c.Label != "accept" && c.Label != "reject":
			return nil, fmt.Errorf("line %d (%s): label %q is neither accept nor reject", n, c.ID, c.Label)
		case strings.TrimSpace(c.Patch) == "":
			return nil, fmt.Errorf("line %d (%s): no patch", n, c.ID)
		case c.Test == "":
			return nil, fmt.Errorf("line %d (%s): no failing test", n, c.ID)
		}
		if prev, ok := ids[c.ID]; ok {
			return nil, fmt.Errorf("line %d: id %s already used on line %d", n, c.ID, prev)
		}
		ids[c.ID] = n
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the cases: %w", err)
	}
	if len(cases) == 0 {
		return nil, errors.New("no cases")
	}
	return cases, nil
}

// Result is the judge's verdict on one case.
type Result struct {
	ID       string `json:"id"`
	Set      string `json:"set,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Label    string `json:"label"`
	Verdict  string `json:"verdict"` // accept or reject
	Reason   string `json:"reason"`
	Unparsed bool   `json:"unparsed,omitempty"` // the answer could not be read (a rejection)
}

// Confusion counts verdicts against labels, accept being the positive
// class.
type Confusion struct {
	TP int `json:"true_accepts"`  // acceptable, accepted
	FP int `json:"false_accepts"` // unacceptable, accepted: what reaches reviewers wrongly
	FN int `json:"false_rejects"` // acceptable, rejected: lost fixes
	TN int `json:"true_rejects"`  // unacceptable, rejected
}

// Report is a calibration run.
type Report struct {
	Model     string    `json:"model"`
	Votes     int       `json:"votes"`
	Cases     int       `json:"cases"`
	Confusion Confusion `json:"confusion"`
	// Precision and Recall are on the accept class; nil when undefined
	// (nothing accepted, nothing acceptable).
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
	Unparsed  int      `json:"unparsed"`
	// Sets are the same figures for each set the cases came from, in the
	// order they came.
	Sets    []SetReport `json:"sets,omitempty"`
	Results []Result    `json:"results"`
}

// SetReport is a run's figures over the cases of one set.
type SetReport struct {
	Name      string    `json:"name"`
	Cases     int       `json:"cases"`
	Confusion Confusion `json:"confusion"`
	Precision *float64  `json:"precision"`
	Recall    *float64  `json:"recall"`
	Unparsed  int       `json:"unparsed"`
}

// Evaluate asks the judge about every case, in order, and scores it. An
// answer that cannot be read is a rejection, as in production; a model that
// cannot be asked stops the run with an error.
func (j *LLM) Evaluate(ctx context.Context, cases []Case, progress func(Result)) (Report, error) {
	r := Report{Model: j.client.Model(), Votes: j.votes, Cases: len(cases)}
	for _, c := range cases {
		g, err := j.Judge(ctx, c.Input())
		if err != nil {
			return r, fmt.Errorf("case %s: %w", c.ID, err)
		}
		res := Result{ID: c.ID, Set: c.Set, Kind: c.Kind, Label: c.Label, Verdict: "reject", Reason: g.Detail}
		if g.Verdict == task.GatePass {
			res.Verdict = "accept"
		}
		res.Unparsed = strings.Contains(g.Detail, "judge answer did not parse")
		r.Results = append(r.Results, res)
		if progress != nil {
			progress(res)
		}
	}
	all := score("", r.Results)
	r.Confusion, r.Precision, r.Recall, r.Unparsed = all.Confusion, all.Precision, all.Recall, all.Unparsed
	r.Sets = perSet(r.Results)
	return r, nil
}

// score counts the results' verdicts against their labels.
func score(name string, results []Result) SetReport {
	s := SetReport{Name: name, Cases: len(results)}
	for _, res := range results {
		if res.Unparsed {
			s.Unparsed++
		}
		switch {
		case res.Label == "accept" && res.Verdict == "accept":
			s.Confusion.TP++
		case res.Label == "reject" && res.Verdict == "accept":
			s.Confusion.FP++
		case res.Label == "accept":
			s.Confusion.FN++
		default:
			s.Confusion.TN++
		}
	}
	s.Precision = ratio(s.Confusion.TP, s.Confusion.TP+s.Confusion.FP)
	s.Recall = ratio(s.Confusion.TP, s.Confusion.TP+s.Confusion.FN)
	return s
}

// perSet scores the results of each named set apart, in the order the sets
// first appear; nil when no result names a set.
func perSet(results []Result) []SetReport {
	var names []string
	by := map[string][]Result{}
	for _, res := range results {
		if res.Set == "" {
			continue
		}
		if _, ok := by[res.Set]; !ok {
			names = append(names, res.Set)
		}
		by[res.Set] = append(by[res.Set], res)
	}
	var sets []SetReport
	for _, n := range names {
		sets = append(sets, score(n, by[n]))
	}
	return sets
}

func ratio(a, b int) *float64 {
	if b == 0 {
		return nil
	}
	v := math.Round(float64(a)/float64(b)*1000) / 1000
	return &v
}

// String is the report for a person: the confusion matrix, precision and
// recall, and the cases the judge got wrong.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "judge %s, %d vote(s), %d cases\n\n", r.Model, r.Votes, r.Cases)
	c := r.Confusion
	fmt.Fprintf(&b, "                    judge accepts  judge rejects\n")
	fmt.Fprintf(&b, "label acceptable    %13d  %13d\n", c.TP, c.FN)
	fmt.Fprintf(&b, "label unacceptable  %13d  %13d\n\n", c.FP, c.TN)
	fmt.Fprintf(&b, "precision (accept) %s   = true accepts / all accepts\n", pct(r.Precision))
	fmt.Fprintf(&b, "recall    (accept) %s   = true accepts / all acceptable\n", pct(r.Recall))
	if r.Unparsed > 0 {
		fmt.Fprintf(&b, "%d answer(s) could not be read (counted as rejections)\n", r.Unparsed)
	}
	if len(r.Sets) > 1 {
		fmt.Fprintf(&b, "\nper set: cases, true/false accepts, false/true rejects, precision, recall\n")
		for _, s := range r.Sets {
			c := s.Confusion
			fmt.Fprintf(&b, "%-28s %4d  %4d %4d  %4d %4d  %s  %s\n", s.Name, s.Cases, c.TP, c.FP, c.FN, c.TN, pct(s.Precision), pct(s.Recall))
		}
	}
	for _, want := range []struct{ label, verdict, title string }{
		{"reject", "accept", "false accepts (unacceptable patches the judge let through)"},
		{"accept", "reject", "false rejects (acceptable patches the judge refused)"},
	} {
		var lines []string
		for _, res := range r.Results {
			if res.Label == want.label && res.Verdict == want.verdict {
				kind := ""
				if res.Kind != "" {
					kind = " [" + res.Kind + "]"
				}
				lines = append(lines, fmt.Sprintf("- %s%s: %s", res.ID, kind, oneLine(res.Reason, 160)))
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\n%s:\n%s\n", want.title, strings.Join(lines, "\n"))
		}
	}
	return b.String()
}

func pct(v *float64) string {
	if v == nil {
		return "  n/a"
	}
	return fmt.Sprintf("%.3f", *v)
}
