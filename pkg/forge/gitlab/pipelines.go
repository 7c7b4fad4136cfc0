package gitlab

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go/v2"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/report"
)

// Limits on what a pipeline's report downloads.
const (
	MaxArchiveBytes = 200 << 20 // a job's artifacts archive
	MaxTraceBytes   = 64 << 20  // a job's log
	MaxFileBytes    = 64 << 20  // one file inside an archive
)

// PipelineReport is what a failed pipeline says of its tests.
type PipelineReport struct {
	// Data is the test report (go test -json or JUnit XML), kept for
	// audit; Parsed the same, as it was read while collecting it.
	Data   []byte
	Parsed report.Result
	// Sources say where each part came from ("archive of job unit",
	// "test report of job unit", "log of job unit").
	Sources []string
	// FailedJobs are the names of the pipeline's failed jobs.
	FailedJobs []string
	// Good is the commit of the last successful pipeline on the same ref
	// before this one ("" when none).
	Good string
}

// LogReader reads a job's log: the test reports it holds, in forms
// report.Parse reads, or none. pkg/joblog's Readers, over the registered
// drivers' console readers, is one.
type LogReader interface {
	Reports(log []byte) [][]byte
}

// ErrNoReport is returned for a pipeline whose failed jobs left no test
// report: no archive, no test report and no test output in their logs
// (a lint job failed, say).
var ErrNoReport = errors.New("no test report in the failed jobs' archives, the pipeline's test report or the jobs' logs")

// PipelineReport gathers the test report of failed pipeline id of the
// project at path, job by failed job: the JUnit XML and go test -json files
// of its artifacts archive (artifacts:paths), else its suite of the
// pipeline's test report (artifacts:reports:junit, which GitLab keeps apart
// from the archive), else the test output its log holds (Config.Logs).
func (f *Forge) PipelineReport(ctx context.Context, path string, id int64, ref string) (PipelineReport, error) {
	var rep PipelineReport
	jobs, err := f.failedJobs(ctx, path, id)
	if err != nil {
		return rep, err
	}
	for _, j := range jobs {
		rep.FailedJobs = append(rep.FailedJobs, j.Name)
	}
	if rep.Good, err = f.lastGreen(ctx, path, id, ref); err != nil {
		f.log.Warn("no good commit: listing the ref's successful pipelines", zap.String("project", path), zap.Error(err))
	}
	var parts collected
	var tests *gl.PipelineTestReport
	for _, j := range jobs {
		if parts.archive(ctx, f, path, j) {
			continue
		}
		if tests == nil {
			if tests, _, err = f.c.Pipelines.GetPipelineTestReport(path, id, gl.WithContext(ctx)); err != nil {
				return rep, fmt.Errorf("read the test report of pipeline %d of %s: %w", id, path, err)
			}
		}
		if parts.suite(tests, j) {
			continue
		}
		if err := parts.trace(ctx, f, path, j); err != nil {
			return rep, err
		}
	}
	rep.Sources = parts.sources
	switch {
	case len(parts.streams) > 0:
		rep.Data, rep.Parsed = bytes.Join(parts.streams, []byte("\n")), report.Merge(parts.streamRes...)
	case len(parts.junit) > 0:
		rep.Data, rep.Parsed = mergeJUnit(parts.junit), report.Merge(parts.junitRes...)
	default:
		return rep, ErrNoReport
	}
	return rep, nil
}

// failedJobs lists the pipeline's failed jobs (the latest try of each).
func (f *Forge) failedJobs(ctx context.Context, path string, id int64) ([]*gl.Job, error) {
	var out []*gl.Job
	opts := &gl.ListJobsOptions{Scope: &[]gl.BuildStateValue{gl.Failed}, ListOptions: gl.ListOptions{PerPage: 100}}
	for range maxListPages {
		jobs, resp, err := f.c.Jobs.ListPipelineJobs(path, id, opts, gl.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("list the failed jobs of pipeline %d of %s: %w", id, path, err)
		}
		out = append(out, jobs...)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// lastGreen is the commit of the newest successful pipeline on ref older
// than pipeline id.
func (f *Forge) lastGreen(ctx context.Context, path string, id int64, ref string) (string, error) {
	pls, _, err := f.c.Pipelines.ListProjectPipelines(path, &gl.ListProjectPipelinesOptions{
		Ref: gl.Ptr(ref), Status: gl.Ptr(gl.Success), OrderBy: gl.Ptr("id"), Sort: gl.Ptr("desc"), ListOptions: gl.ListOptions{PerPage: 50},
	}, gl.WithContext(ctx))
	if err != nil {
		return "", err
	}
	for _, p := range pls {
		if p.ID < id {
			return p.SHA, nil
		}
	}
	return "", nil
}

// collected are the reports gathered so far, by format.
type collected struct {
	// streams are line-delimited reports (events, one a line), which
	// join by concatenation; junit XML documents, which merge as suites.
	streams, junit      [][]byte
	streamRes, junitRes []report.Result
	sources             []string
}

func (c *collected) add(data []byte, res report.Result, source string) {
	if res.Format == "junit" {
		c.junit, c.junitRes = append(c.junit, data), append(c.junitRes, res)
	} else {
		c.streams, c.streamRes = append(c.streams, data), append(c.streamRes, res)
	}
	c.sources = append(c.sources, source)
}

// hasArchive reports whether job j kept an artifacts archive.
func hasArchive(j *gl.Job) bool {
	if j.ArtifactsFile.Filename != "" {
		return true
	}
	for _, a := range j.Artifacts {
		if a.FileType == "archive" {
			return true
		}
	}
	return false
}

// archive adds the reports of j's artifacts archive; false when it holds
// none (or cannot be read: the log says why).
func (c *collected) archive(ctx context.Context, f *Forge, path string, j *gl.Job) bool {
	if !hasArchive(j) {
		return false
	}
	data, err := f.download(ctx, "projects/"+url.PathEscape(path)+"/jobs/"+strconv.FormatInt(j.ID, 10)+"/artifacts", MaxArchiveBytes)
	if err != nil {
		f.log.Warn("the job's archive could not be read; skipped", zap.String("project", path), zap.String("job", j.Name), zap.Error(err))
		return false
	}
	found := false
	err = eachReportInZip(data, func(name string, body []byte, res report.Result) {
		c.add(body, res, "archive of job "+j.Name+" ("+name+")")
		found = true
	})
	if err != nil {
		f.log.Warn("the job's archive is not a readable zip; skipped", zap.String("project", path), zap.String("job", j.Name), zap.Error(err))
	}
	return found
}

// suite adds j's suite of the pipeline's test report; false when it has
// none that failed.
func (c *collected) suite(tests *gl.PipelineTestReport, j *gl.Job) bool {
	for _, s := range tests.TestSuites {
		if s.Name != j.Name || s.FailedCount+s.ErrorCount == 0 {
			continue
		}
		data := junitOfSuite(s)
		res, err := report.Parse(data)
		if err != nil {
			return false
		}
		c.add(data, res, "test report of job "+j.Name)
		return true
	}
	return false
}

// trace adds the test reports j's log holds (read by the forge's
// LogReader), if it holds any; with no LogReader the log is not read.
func (c *collected) trace(ctx context.Context, f *Forge, path string, j *gl.Job) error {
	if f.logs == nil {
		return nil
	}
	data, err := f.download(ctx, "projects/"+url.PathEscape(path)+"/jobs/"+strconv.FormatInt(j.ID, 10)+"/trace", MaxTraceBytes)
	if err != nil {
		return fmt.Errorf("read the log of job %s of %s: %w", j.Name, path, err)
	}
	for _, g := range f.logs.Reports(data) {
		res, err := report.Parse(g)
		if err != nil {
			f.log.Warn("test output in a job's log that does not read as a report; skipped", zap.String("job", j.Name), zap.Error(err))
			continue
		}
		c.add(g, res, "log of job "+j.Name)
	}
	return nil
}

// download reads an API path's raw answer, at most limit bytes.
func (f *Forge) download(ctx context.Context, apiPath string, limit int64) ([]byte, error) {
	req, err := f.c.NewRequest("GET", apiPath, nil, []gl.RequestOptionFunc{gl.WithContext(ctx)})
	if err != nil {
		return nil, err
	}
	w := &capped{limit: limit}
	if _, err := f.c.Do(req, w); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

// capped is a writer that refuses more than limit bytes.
type capped struct {
	buf   bytes.Buffer
	limit int64
}

func (c *capped) Write(p []byte) (int, error) {
	if int64(c.buf.Len()+len(p)) > c.limit {
		return 0, fmt.Errorf("larger than %d bytes", c.limit)
	}
	return c.buf.Write(p)
}

// eachReportInZip calls fn with each file of an archive that reads as a
// test report, in name order.
func eachReportInZip(data []byte, fn func(name string, body []byte, res report.Result)) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	files := append([]*zip.File(nil), zr.File...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	for _, zf := range files {
		if zf.FileInfo().IsDir() || zf.UncompressedSize64 > MaxFileBytes {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return fmt.Errorf("%s: %w", zf.Name, err)
		}
		body, err := io.ReadAll(io.LimitReader(rc, MaxFileBytes))
		rc.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", zf.Name, err)
		}
		if res, err := report.Parse(body); err == nil {
			fn(zf.Name, body, res)
		}
	}
	return nil
}

// maxResyncPages bounds the pages of 50 failed pipelines a resync reads
// for one project.
const maxResyncPages = 4

// FailedPipelines are the project's failed pipelines updated since, newest
// first, each as the pipeline hook GitLab would have sent for it (the
// fields the filter and the processor read).
func (f *Forge) FailedPipelines(ctx context.Context, path string, since time.Time) ([]*gl.PipelineEvent, error) {
	p, _, err := f.c.Projects.GetProject(path, nil, gl.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("read project %s: %w", path, err)
	}
	opts := &gl.ListProjectPipelinesOptions{Status: gl.Ptr(gl.Failed), UpdatedAfter: gl.Ptr(since.UTC()), OrderBy: gl.Ptr("id"), Sort: gl.Ptr("desc"), ListOptions: gl.ListOptions{PerPage: 50}}
	var out []*gl.PipelineEvent
	for range maxResyncPages {
		pls, resp, err := f.c.Pipelines.ListProjectPipelines(path, opts, gl.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("list the failed pipelines of %s: %w", path, err)
		}
		for _, pl := range pls {
			e := &gl.PipelineEvent{ObjectKind: "pipeline"}
			e.ObjectAttributes.ID, e.ObjectAttributes.IID, e.ObjectAttributes.Ref, e.ObjectAttributes.SHA = pl.ID, pl.IID, pl.Ref, pl.SHA
			e.ObjectAttributes.Status, e.ObjectAttributes.Source, e.ObjectAttributes.URL = pl.Status, pl.Source, pl.WebURL
			e.Project.ID, e.Project.PathWithNamespace, e.Project.DefaultBranch, e.Project.WebURL = p.ID, p.PathWithNamespace, p.DefaultBranch, p.WebURL
			out = append(out, e)
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}
