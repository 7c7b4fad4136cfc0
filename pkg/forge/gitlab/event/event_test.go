package event_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/redfix/redfix/pkg/forge/gitlab/event"
)

// fixture is one of the hook examples written from GitLab's documented
// payloads (the test GitLab's, which its own tests hold its hooks to).
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "gltest", "testdata", "hooks", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDecodeDocumentedPayloads: the pipeline, merge request and note
// examples decode, each with its project's full path (nested groups
// kept), and the filter acts on each as documented.
func TestDecodeDocumentedPayloads(t *testing.T) {
	for _, c := range []struct {
		event, file string
		skip        string
	}{
		{event.Pipeline, "pipeline.json", ""},
		{event.MergeRequest, "merge_request.json", ""},
		{event.Note, "note.json", ""},
	} {
		d, err := event.Decode(c.event, fixture(t, c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if d.Project != "acme/payments/ledger" {
			t.Errorf("%s: project %q", c.file, d.Project)
		}
		if got := d.Skip(event.Filter{}); got != c.skip {
			t.Errorf("%s: skip %q, want %q", c.file, got, c.skip)
		}
	}
	if _, err := event.Decode(event.Pipeline, fixture(t, "note.json")); err == nil {
		t.Error("a note's payload decoded as a pipeline's")
	}
	if _, err := event.Decode("Push Hook", fixture(t, "pipeline.json")); err == nil {
		t.Error("an event redfix does not act on decoded")
	}
}

// TestFilter: projects by path and pattern; failed pipelines on the
// default branch or the configured ones; merge requests' pipelines only
// where the project takes them, a fork's too (triage holds it to the
// opt-ins), but not one run in the fork's project; only redfix's merge
// requests' outcomes; only /redfix notes by people on merge requests.
func TestFilter(t *testing.T) {
	pipeline := func(edit func(s string) string) event.Delivery {
		d, err := event.Decode(event.Pipeline, []byte(edit(string(fixture(t, "pipeline.json")))))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	same := func(s string) string { return s }
	f := event.Filter{Allow: []string{"acme/payments/**"}, Projects: []event.Project{{Name: "acme/payments/*", Branches: []string{"main", "release-*"}}}}
	for name, c := range map[string]struct {
		d      event.Delivery
		f      event.Filter
		reason string
	}{
		"failed on main":      {pipeline(same), f, ""},
		"not allowed":         {pipeline(same), event.Filter{Allow: []string{"other/*"}}, "not in the allowlist"},
		"success":             {pipeline(func(s string) string { return strings.Replace(s, `"status": "failed"`, `"status": "success"`, 1) }), f, "not failed"},
		"release branch":      {pipeline(func(s string) string { return strings.Replace(s, `"ref": "main"`, `"ref": "release-2"`, 1) }), f, ""},
		"feature branch":      {pipeline(func(s string) string { return strings.Replace(s, `"ref": "main"`, `"ref": "feature"`, 1) }), f, "not one of main, release-*"},
		"default branch only": {pipeline(func(s string) string { return strings.Replace(s, `"ref": "main"`, `"ref": "release-2"`, 1) }), event.Filter{}, `not one of main`},
		"merge request":       {pipeline(mrPipeline(1207)), f, "a merge request's pipeline"},
		"merge request taken": {pipeline(mrPipeline(1207)), event.Filter{Projects: []event.Project{{Name: "acme/**", MergeRequests: true}}}, ""},
		"fork":                {pipeline(mrPipeline(9999)), event.Filter{Projects: []event.Project{{Name: "acme/**", MergeRequests: true}}}, ""},
		"fork not taken":      {pipeline(mrPipeline(9999)), f, "a merge request's pipeline"},
		"run in the fork": {pipeline(func(s string) string {
			return strings.Replace(mrPipeline(9999)(s), `"id": 1207,`, `"id": 9999,`, 1)
		}), event.Filter{Projects: []event.Project{{Name: "acme/**", MergeRequests: true}}}, "run in project 9999, not in the project it merges into (1207)"},
	} {
		if got := c.d.Skip(c.f); (c.reason == "") != (got == "") || !strings.Contains(got, c.reason) {
			t.Errorf("%s: skip %q, want %q", name, got, c.reason)
		}
	}
	note := func(edit func(s string) string) event.Delivery {
		d, err := event.Decode(event.Note, []byte(edit(string(fixture(t, "note.json")))))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for name, c := range map[string]struct {
		d      event.Delivery
		reason string
	}{
		"not a command": {note(func(s string) string { return strings.Replace(s, `"/redfix explain"`, `"thanks!"`, 1) }), "not a /redfix command"},
		"on an issue": {note(func(s string) string {
			return strings.Replace(s, `"noteable_type": "MergeRequest"`, `"noteable_type": "Issue"`, 1)
		}), "a note on a Issue"},
		"system":                            {note(func(s string) string { return strings.Replace(s, `"system": false`, `"system": true`, 1) }), "a system note"},
		"edited":                            {note(func(s string) string { return strings.Replace(s, `"action": "create"`, `"action": "update"`, 1) }), "not tracked"},
		"a thread":                          {note(thread(`"DiscussionNote"`, "redfix/")), ""},
		"a diff's thread":                   {note(thread(`"DiffNote"`, "redfix/")), ""},
		"a thread on another merge request": {note(thread(`"DiscussionNote"`, "dana/")), "nor in a thread on redfix's merge request"},
		"a thread's edit": {note(func(s string) string {
			return strings.Replace(thread(`"DiscussionNote"`, "redfix/")(s), `"action": "create"`, `"action": "update"`, 1)
		}), "not tracked"},
	} {
		if got := c.d.Skip(event.Filter{}); (c.reason == "") != (got == "") || !strings.Contains(got, c.reason) {
			t.Errorf("%s: skip %q, want %q", name, got, c.reason)
		}
	}
	mr, err := event.Decode(event.MergeRequest, []byte(strings.Replace(string(fixture(t, "merge_request.json")), `"source_branch": "redfix/`, `"source_branch": "dana/`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := mr.Skip(event.Filter{}); !strings.Contains(got, "not redfix's") {
		t.Errorf("a person's merge request: skip %q", got)
	}
	if !event.Match("acme/payments/**", "acme/payments/core/ledger") || event.Match("acme/*", "acme/payments/ledger") || !event.Match("ACME/Payments/Ledger", "acme/payments/ledger") {
		t.Error("patterns: ** takes every project below a group, * one segment, case does not matter")
	}
}

// mrPipeline turns the pipeline example into one of merge request !12,
// whose source project is source.
func mrPipeline(source int) func(string) string {
	return func(s string) string {
		s = strings.Replace(s, `"source": "push"`, `"source": "merge_request_event"`, 1)
		s = strings.Replace(s, `"ref": "main"`, `"ref": "refs/merge-requests/12/head"`, 1)
		return strings.Replace(s, `"merge_request": null`, `"merge_request": {"id": 55120, "iid": 12, "title": "t", "source_branch": "dana/x", "source_project_id": `+itoa(source)+`, "target_branch": "main", "target_project_id": 1207, "state": "opened", "merge_status": "can_be_merged", "detailed_merge_status": "mergeable", "url": "u"}`, 1)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestMergeRequestIID: a pipeline's merge request is its payload's, else
// the one its ref names, as a listed pipeline shows it.
func TestMergeRequestIID(t *testing.T) {
	for ref, want := range map[string]int64{"refs/merge-requests/12/head": 12, "refs/merge-requests/7/merge": 7, "main": 0, "refs/merge-requests/x/head": 0, "refs/merge-requests/-3/head": 0} {
		e := &gl.PipelineEvent{}
		e.ObjectAttributes.Ref = ref
		if got := event.MergeRequestIID(e); got != want {
			t.Errorf("ref %s: %d, want %d", ref, got, want)
		}
	}
	e := &gl.PipelineEvent{}
	e.ObjectAttributes.Ref, e.MergeRequest.IID = "dana/x", 4
	if got := event.MergeRequestIID(e); got != 4 {
		t.Errorf("the payload's merge request: %d, want 4", got)
	}
}

// thread makes a note's payload one of a discussion thread of type kind
// on a merge request from a branch starting with prefix, in words that
// are no command.
func thread(kind, prefix string) func(string) string {
	return func(s string) string {
		s = strings.Replace(s, `"/redfix explain"`, `"this rounds the wrong way: use banker's rounding"`, 1)
		s = strings.Replace(s, `"type": null`, `"type": `+kind, 1)
		return strings.Replace(s, `"source_branch": "redfix/`, `"source_branch": "`+prefix, 1)
	}
}
