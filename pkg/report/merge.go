package report

// Merge is one result for several reports of one CI run (shards, one file
// per package or per job): their tests, failures and build errors side by
// side, and each test's runs added up. The format is the first report's.
// Each report stays as its own parser read it: a package cut short in one
// file is incomplete even when another file has it whole.
func Merge(results ...Result) Result {
	var m Result
	for i, r := range results {
		if i == 0 {
			m.Format = r.Format
		}
		m.Total += r.Total
		m.Passed = append(m.Passed, r.Passed...)
		m.Skipped = append(m.Skipped, r.Skipped...)
		m.Failures = append(m.Failures, r.Failures...)
		m.BuildErrors = append(m.BuildErrors, r.BuildErrors...)
		m.NotRun = append(m.NotRun, r.NotRun...)
		m.Incomplete = append(m.Incomplete, r.Incomplete...)
		for id, n := range r.Runs {
			if m.Runs == nil {
				m.Runs = map[string]Runs{}
			}
			c := m.Runs[id]
			c.Pass, c.Fail, c.Skip = c.Pass+n.Pass, c.Fail+n.Fail, c.Skip+n.Skip
			m.Runs[id] = c
		}
	}
	return m
}
