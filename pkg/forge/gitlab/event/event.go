// Package event is the vocabulary shared by both sides of GitLab's
// webhooks: the events redfix acts on (pipeline, merge request and note
// hooks), decoded from their payloads, and the filter that says which
// projects, branches and pipelines it acts on. The webhook endpoint
// (pkg/forge/gitlab/webhook) applies it before a delivery is stored; the
// processing of stored deliveries (pkg/forge/gitlab/deliveries) applies it
// again when triage consumes them.
package event

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/redfix/redfix/pkg/forge"
)

// Kind is the kind of GitLab's deliveries on the reports stream
// (ingest.Submission.Kind): the driver's name.
const Kind = "gitlab"

// The events redfix acts on, as X-Gitlab-Event names them.
const (
	Pipeline     = "Pipeline Hook"
	MergeRequest = "Merge Request Hook"
	Note         = "Note Hook"
)

// Known reports whether redfix acts on events named event.
func Known(event string) bool {
	return event == Pipeline || event == MergeRequest || event == Note
}

// Delivery is a decoded webhook of an event redfix acts on.
type Delivery struct {
	Event string
	// Project is the project's full path ("acme/payments/ledger").
	Project  string
	Pipeline *gl.PipelineEvent
	MR       *gl.MergeEvent
	// Note is a note on a merge request (notes on issues, commits and
	// snippets are not acted on).
	Note *gl.MergeCommentEvent
	// noteable is what the note was written on.
	noteable string
}

// Decode parses a payload of one of the events redfix acts on.
func Decode(event string, payload []byte) (Delivery, error) {
	d := Delivery{Event: event}
	var err error
	switch event {
	case Pipeline:
		d.Pipeline = new(gl.PipelineEvent)
		err = json.Unmarshal(payload, d.Pipeline)
		d.Project = d.Pipeline.Project.PathWithNamespace
		if err == nil && (d.Pipeline.ObjectKind != "pipeline" || d.Pipeline.ObjectAttributes.ID == 0) {
			err = fmt.Errorf("not a pipeline's payload")
		}
	case MergeRequest:
		d.MR = new(gl.MergeEvent)
		err = json.Unmarshal(payload, d.MR)
		d.Project = d.MR.Project.PathWithNamespace
		if err == nil && (d.MR.ObjectKind != "merge_request" || d.MR.ObjectAttributes.IID == 0) {
			err = fmt.Errorf("not a merge request's payload")
		}
	case Note:
		d.Note = new(gl.MergeCommentEvent)
		err = json.Unmarshal(payload, d.Note)
		d.Project = d.Note.Project.PathWithNamespace
		d.noteable = d.Note.ObjectAttributes.NoteableType
		if err == nil && (d.Note.ObjectKind != "note" || d.Note.ObjectAttributes.ID == 0) {
			err = fmt.Errorf("not a note's payload")
		}
	default:
		return d, fmt.Errorf("event %s is not one redfix acts on", event)
	}
	if err != nil {
		return d, fmt.Errorf("decode %s payload: %w", event, err)
	}
	if strings.Count(d.Project, "/") < 1 {
		return d, fmt.Errorf("decode %s payload: no project path_with_namespace", event)
	}
	return d, nil
}

// Project are one project's settings.
type Project struct {
	// Name is a full path or a pattern ("group/*", "group/**").
	Name string
	// Branches whose failed pipelines are repaired (globs); the default
	// branch when empty.
	Branches []string
	// MergeRequests repairs merge request pipelines too.
	MergeRequests bool
}

// Filter decides which projects and pipelines redfix acts on.
type Filter struct {
	// Allow, when not empty, narrows the projects taken; empty, every
	// project whose webhook carries the secret is.
	Allow []string
	// Projects hold per-project settings; the first match wins.
	Projects []Project
}

// Match reports whether pattern names the project at full: the path
// itself, a glob whose "*" is one segment, or a group and "/**" for
// every project below it (case does not matter).
func Match(pattern, full string) bool {
	pattern, full = strings.ToLower(strings.TrimSpace(pattern)), strings.ToLower(full)
	if pattern == full {
		return true
	}
	if group, ok := strings.CutSuffix(pattern, "/**"); ok {
		return strings.HasPrefix(full, group+"/")
	}
	ok, err := path.Match(pattern, full)
	return err == nil && ok
}

// Allowed reports whether the project at full may be acted on.
func (f Filter) Allowed(full string) bool {
	return len(f.Allow) == 0 || slices.ContainsFunc(f.Allow, func(p string) bool { return Match(p, full) })
}

// Settings are the project's settings: its entry, or the zero Project.
func (f Filter) Settings(full string) Project {
	for _, p := range f.Projects {
		if Match(p.Name, full) {
			return p
		}
	}
	return Project{Name: full}
}

// Names are the projects and patterns the filter names, as written.
func (f Filter) Names() []string {
	names := append([]string(nil), f.Allow...)
	for _, p := range f.Projects {
		names = append(names, p.Name)
	}
	return names
}

// Skip says why redfix does nothing with the delivery, or "" when it acts.
func (d Delivery) Skip(f Filter) string {
	if !f.Allowed(d.Project) {
		return fmt.Sprintf("project %s is not in the allowlist", d.Project)
	}
	switch {
	case d.Pipeline != nil:
		return f.SkipPipeline(d.Pipeline)
	case d.MR != nil:
		switch a := d.MR.ObjectAttributes.Action; a {
		case "merge", "close", "reopen":
		default:
			return "merge request action " + a + " is not tracked"
		}
		if b := d.MR.ObjectAttributes.SourceBranch; !strings.HasPrefix(b, forge.BranchPrefix) {
			return fmt.Sprintf("merge request from %q is not redfix's", b)
		}
	case d.Note != nil:
		a := d.Note.ObjectAttributes
		switch {
		case d.noteable != "MergeRequest":
			return "a note on a " + d.noteable + " is not acted on"
		case a.System:
			return "a system note"
		case a.Action != "" && a.Action != "create":
			return "note action " + string(a.Action) + " is not tracked"
		case !forge.IsCommand(a.Note) && !d.InThread():
			return "note is not a /redfix command, nor in a thread on redfix's merge request"
		}
	}
	return ""
}

// InThread reports whether a note is one of a discussion thread (a
// resolvable one: a comment on the diff, or a thread started as such) on
// one of redfix's merge requests. Opening one, unresolved, is how a
// reviewer on GitLab asks for changes; whether this note did is asked of
// the API when the delivery is processed, not taken from the payload.
func (d Delivery) InThread() bool {
	if d.Note == nil || !strings.HasPrefix(d.Note.MergeRequest.SourceBranch, forge.BranchPrefix) {
		return false
	}
	switch d.Note.ObjectAttributes.Type {
	case "DiscussionNote", "DiffNote":
		return true
	}
	return false
}

// SkipPipeline says why a pipeline is not repaired, or "" when it is: it
// must have failed, on a watched branch (the project's settings, else its
// default branch), or be a merge request's where the project's settings
// take those, run in the project the merge request merges into. A merge
// request from a fork passes here: whether it is one is read from the
// merge request through the API when the pipeline is processed, and
// triage holds it to the opt-ins to forks.
func (f Filter) SkipPipeline(e *gl.PipelineEvent) string {
	a := e.ObjectAttributes
	full := e.Project.PathWithNamespace
	switch {
	case a.Status != "failed":
		return fmt.Sprintf("pipeline is %s, not failed", a.Status)
	case a.Tag:
		return "a tag's pipeline"
	}
	set := f.Settings(full)
	if OnMergeRequest(e) {
		switch {
		case !set.MergeRequests:
			return fmt.Sprintf("a merge request's pipeline (!%d, source %s)", e.MergeRequest.IID, a.Source)
		case e.MergeRequest.TargetProjectID != 0 && e.Project.ID != 0 && e.Project.ID != e.MergeRequest.TargetProjectID:
			return fmt.Sprintf("a pipeline of merge request !%d run in project %d, not in the project it merges into (%d)", e.MergeRequest.IID, e.Project.ID, e.MergeRequest.TargetProjectID)
		case MergeRequestIID(e) == 0:
			return "a merge request's pipeline that names no merge request"
		}
		return ""
	}
	branches := set.Branches
	if len(branches) == 0 {
		branches = []string{e.Project.DefaultBranch}
	}
	if !slices.ContainsFunc(branches, func(b string) bool {
		ok, err := path.Match(b, a.Ref)
		return b == a.Ref || err == nil && ok
	}) {
		return fmt.Sprintf("branch %q is not one of %s", a.Ref, strings.Join(branches, ", "))
	}
	return ""
}

// OnMergeRequest reports whether the pipeline tested a merge request.
func OnMergeRequest(e *gl.PipelineEvent) bool {
	return e.ObjectAttributes.Source == "merge_request_event" || e.MergeRequest.IID != 0 || strings.HasPrefix(e.ObjectAttributes.Ref, "refs/merge-requests/")
}

// MergeRequestIID is the merge request a pipeline tested: its payload's,
// else the one its ref names (refs/merge-requests/IID/head, as a listed
// pipeline shows it); 0 when neither names one.
func MergeRequestIID(e *gl.PipelineEvent) int64 {
	if e.MergeRequest.IID != 0 {
		return e.MergeRequest.IID
	}
	rest, ok := strings.CutPrefix(e.ObjectAttributes.Ref, "refs/merge-requests/")
	if !ok {
		return 0
	}
	n, _, _ := strings.Cut(rest, "/")
	iid, err := strconv.ParseInt(n, 10, 64)
	if err != nil || iid < 0 {
		return 0
	}
	return iid
}

// Branch is the branch a pipeline tested: its ref, or its merge request's
// source branch.
func Branch(e *gl.PipelineEvent) string {
	if OnMergeRequest(e) && e.MergeRequest.SourceBranch != "" {
		return e.MergeRequest.SourceBranch
	}
	return e.ObjectAttributes.Ref
}
