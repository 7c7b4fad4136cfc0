// Package runreport turns a failed GitHub Actions workflow run into a test
// report: the test reports found in its artifacts (JUnit XML or a stream of
// test events), or, when it has none, the test output its failed jobs'
// logs hold (read by a LogReader); plus the commit of the last green run
// of the same workflow on the same branch.
package runreport

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"regexp"
	"sort"
	"strings"

	gogithub "github.com/google/go-github/v62/github"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/report"
)

// Limits on what is downloaded.
const (
	MaxArtifactBytes = 200 << 20 // an artifact's zip
	MaxLogBytes      = 64 << 20  // a job's log
	MaxFileBytes     = 64 << 20  // one file inside a zip
	maxPages         = 10
)

// Report is what a failed run says.
type Report struct {
	// Data is a test report: a stream of test events or JUnit XML, kept
	// for audit.
	Data []byte
	// Parsed is Data as read while collecting it: each file was parsed
	// once, to know it for a report, and the results merged, so nothing
	// downstream parses it again.
	Parsed report.Result
	// Source says where it came from: "artifact NAME", or "log of job NAME".
	Sources []string
	// FailedJobs are the names of the run's failed jobs.
	FailedJobs []string
	// Good is the head commit of the last successful run of the same
	// workflow on the same branch, before this one ("" when none).
	Good string
}

// ErrNoReport is returned for a run where neither the artifacts nor the
// failed jobs' logs hold a test report (a lint job failed, say).
var ErrNoReport = errors.New("no test report in the run's artifacts or failed jobs' logs")

// LogReader reads a job's log: the test reports it holds, in forms
// report.Parse reads, or none. pkg/joblog's Readers, over the registered
// drivers' console readers, is one.
type LogReader interface {
	Reports(log []byte) [][]byte
}

// Collector reads runs through the API. Downloads (artifacts and logs, to
// which the API answers with a redirect to storage elsewhere) go through
// Download, a plain client that never carries GitHub's credentials.
type Collector struct {
	Download *http.Client // nil: a client with no credentials
	// Logs reads the failed jobs' logs of a run without reports; nil: the
	// logs are not read.
	Logs LogReader
	Log  *zap.Logger
}

// Collect gathers the report of run in owner/repo; artifacts are matched
// against globs (every artifact when none).
func (c *Collector) Collect(ctx context.Context, client *gogithub.Client, owner, repo string, run *gogithub.WorkflowRun, globs []string) (Report, error) {
	log := c.Log
	if log == nil {
		log = zap.NewNop()
	}
	log = log.With(zap.String("repo", owner+"/"+repo), zap.Int64("run", run.GetID()))
	var rep Report
	jobs, err := c.failedJobs(ctx, client, owner, repo, run)
	if err != nil {
		return rep, err
	}
	for _, j := range jobs {
		rep.FailedJobs = append(rep.FailedJobs, j.GetName())
	}
	if rep.Good, err = c.lastGreen(ctx, client, owner, repo, run); err != nil {
		log.Warn("no good commit: listing the workflow's successful runs", zap.Error(err))
	}

	var streams, junit [][]byte
	var streamRes, junitRes []report.Result
	arts, err := c.artifacts(ctx, client, owner, repo, run.GetID())
	if err != nil {
		return rep, err
	}
	for _, a := range arts {
		if !matchAny(globs, a.GetName()) || a.GetExpired() {
			continue
		}
		if a.GetSizeInBytes() > MaxArtifactBytes {
			log.Warn("artifact too large; skipped", zap.String("artifact", a.GetName()), zap.Int64("bytes", a.GetSizeInBytes()))
			continue
		}
		u, _, err := client.Actions.DownloadArtifact(ctx, owner, repo, a.GetID(), 0)
		if err != nil {
			return rep, fmt.Errorf("download artifact %s of run %d: %w", a.GetName(), run.GetID(), err)
		}
		data, err := c.fetch(ctx, u.String(), MaxArtifactBytes)
		if err != nil {
			return rep, fmt.Errorf("download artifact %s of run %d: %w", a.GetName(), run.GetID(), err)
		}
		g, j, gr, jr, err := reportsInZip(data)
		if err != nil {
			log.Warn("artifact is not a readable zip; skipped", zap.String("artifact", a.GetName()), zap.Error(err))
			continue
		}
		if len(g)+len(j) > 0 {
			rep.Sources = append(rep.Sources, "artifact "+a.GetName())
		}
		streams, junit = append(streams, g...), append(junit, j...)
		streamRes, junitRes = append(streamRes, gr...), append(junitRes, jr...)
	}
	if len(streams)+len(junit) == 0 && c.Logs != nil {
		for _, j := range jobs {
			g, jx, gr, jr, err := c.jobLog(ctx, client, owner, repo, run, j, log)
			if err != nil {
				return rep, err
			}
			if len(g)+len(jx) > 0 {
				rep.Sources = append(rep.Sources, "log of job "+j.GetName())
			}
			streams, junit = append(streams, g...), append(junit, jx...)
			streamRes, junitRes = append(streamRes, gr...), append(junitRes, jr...)
		}
	}
	switch {
	case len(streams) > 0:
		rep.Data, rep.Parsed = bytes.Join(streams, []byte("\n")), report.Merge(streamRes...)
	case len(junit) > 0:
		rep.Data, rep.Parsed = mergeJUnit(junit), report.Merge(junitRes...)
	default:
		return rep, ErrNoReport
	}
	return rep, nil
}

// jobLog reads the reports job j's log holds, by format (as reportsInZip).
func (c *Collector) jobLog(ctx context.Context, client *gogithub.Client, owner, repo string, run *gogithub.WorkflowRun, j *gogithub.WorkflowJob, log *zap.Logger) (streams, junit [][]byte, streamRes, junitRes []report.Result, err error) {
	u, _, err := client.Actions.GetWorkflowJobLogs(ctx, owner, repo, j.GetID(), 0)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("log of job %s of run %d: %w", j.GetName(), run.GetID(), err)
	}
	data, err := c.fetch(ctx, u.String(), MaxLogBytes)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("log of job %s of run %d: %w", j.GetName(), run.GetID(), err)
	}
	for _, text := range logTexts(data) {
		for _, g := range c.Logs.Reports(text) {
			res, err := report.Parse(g)
			if err != nil {
				log.Warn("test output in a job's log that does not read as a report; skipped", zap.String("job", j.GetName()), zap.Error(err))
				continue
			}
			if res.Format == "junit" {
				junit, junitRes = append(junit, g), append(junitRes, res)
			} else {
				streams, streamRes = append(streams, g), append(streamRes, res)
			}
		}
	}
	return streams, junit, streamRes, junitRes, nil
}

func (c *Collector) failedJobs(ctx context.Context, client *gogithub.Client, owner, repo string, run *gogithub.WorkflowRun) ([]*gogithub.WorkflowJob, error) {
	var failed []*gogithub.WorkflowJob
	opts := &gogithub.ListWorkflowJobsOptions{Filter: "latest", ListOptions: gogithub.ListOptions{PerPage: 100}}
	for range maxPages {
		jobs, resp, err := client.Actions.ListWorkflowJobs(ctx, owner, repo, run.GetID(), opts)
		if err != nil {
			return nil, fmt.Errorf("list jobs of run %d: %w", run.GetID(), err)
		}
		for _, j := range jobs.Jobs {
			if j.GetConclusion() == "failure" {
				failed = append(failed, j)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return failed, nil
}

func (c *Collector) artifacts(ctx context.Context, client *gogithub.Client, owner, repo string, runID int64) ([]*gogithub.Artifact, error) {
	var all []*gogithub.Artifact
	opts := &gogithub.ListOptions{PerPage: 100}
	for range maxPages {
		list, resp, err := client.Actions.ListWorkflowRunArtifacts(ctx, owner, repo, runID, opts)
		if err != nil {
			return nil, fmt.Errorf("list artifacts of run %d: %w", runID, err)
		}
		all = append(all, list.Artifacts...)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return all, nil
}

// lastGreen is the head commit of the newest successful run of the run's
// workflow on its branch that started before it.
func (c *Collector) lastGreen(ctx context.Context, client *gogithub.Client, owner, repo string, run *gogithub.WorkflowRun) (string, error) {
	opts := &gogithub.ListWorkflowRunsOptions{Branch: run.GetHeadBranch(), Status: "success", ListOptions: gogithub.ListOptions{PerPage: 30}}
	for range 3 {
		runs, resp, err := client.Actions.ListWorkflowRunsByID(ctx, owner, repo, run.GetWorkflowID(), opts)
		if err != nil {
			return "", fmt.Errorf("list successful runs of workflow %d: %w", run.GetWorkflowID(), err)
		}
		var best *gogithub.WorkflowRun
		for _, r := range runs.WorkflowRuns {
			if r.GetID() == run.GetID() || r.GetConclusion() != "success" || r.GetHeadSHA() == run.GetHeadSHA() {
				continue
			}
			if !r.GetCreatedAt().Before(run.GetCreatedAt().Time) && !run.GetCreatedAt().IsZero() {
				continue
			}
			if best == nil || r.GetCreatedAt().After(best.GetCreatedAt().Time) {
				best = r
			}
		}
		if best != nil {
			return best.GetHeadSHA(), nil
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return "", nil
}

// fetch downloads a redirect target with the plain client, bounded.
func (c *Collector) fetch(ctx context.Context, url string, limit int64) ([]byte, error) {
	client := c.Download
	if client == nil {
		client = &http.Client{}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", redactURL(url), resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redactURL(url), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("GET %s: larger than %d bytes", redactURL(url), limit)
	}
	return data, nil
}

// redactURL drops the query, where storage URLs carry their signatures.
func redactURL(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i] + "?…"
	}
	return u
}

func matchAny(globs []string, name string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, err := path.Match(g, name); err == nil && ok {
			return true
		}
	}
	return false
}

// reportsInZip returns the test event streams and JUnit XML files in an
// artifact's zip, in name order, with each one's parsed result.
func reportsInZip(data []byte) (streams, junit [][]byte, streamRes, junitRes []report.Result, err error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	files := append([]*zip.File(nil), zr.File...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	for _, f := range files {
		if f.FileInfo().IsDir() || f.UncompressedSize64 > MaxFileBytes {
			continue
		}
		body, err := readZipFile(f)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		res, err := report.Parse(body)
		if err != nil {
			continue // not a test report
		}
		if res.Format == "junit" {
			junit, junitRes = append(junit, body), append(junitRes, res)
		} else {
			streams, streamRes = append(streams, body), append(streamRes, res)
		}
	}
	return streams, junit, streamRes, junitRes, nil
}

func readZipFile(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, MaxFileBytes))
}

// logTexts are the texts of a job's log: the log itself, or the files of a
// zip (a run's logs come zipped).
func logTexts(data []byte) [][]byte {
	if !bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return [][]byte{data}
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return [][]byte{data}
	}
	var texts [][]byte
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || f.UncompressedSize64 > MaxFileBytes {
			continue
		}
		if body, err := readZipFile(f); err == nil {
			texts = append(texts, body)
		}
	}
	return texts
}

var xmlDeclRE = regexp.MustCompile(`^\s*<\?xml[^>]*\?>`)

// mergeJUnit puts several JUnit documents under one <testsuites>.
func mergeJUnit(docs [][]byte) []byte {
	if len(docs) == 1 {
		return docs[0]
	}
	var b bytes.Buffer
	b.WriteString("<testsuites>\n")
	for _, d := range docs {
		b.Write(xmlDeclRE.ReplaceAll(d, nil))
		b.WriteString("\n")
	}
	b.WriteString("</testsuites>\n")
	return b.Bytes()
}
