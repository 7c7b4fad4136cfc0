// Package event is the vocabulary shared by both sides of GitHub's
// webhooks: the events redfix acts on, decoded from their payloads, and the
// filter that says which repositories, branches and runs it acts on. The
// webhook endpoint (pkg/forge/github/webhook) applies it before a delivery is stored;
// the processing of stored deliveries (pkg/forge/github/deliveries) applies it again
// when triage consumes them.
package event

import (
	"encoding/json"
	"fmt"
	"strings"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/redfix/redfix/pkg/forge"
)

// The events redfix acts on, as X-GitHub-Event names them.
const (
	Ping              = "ping"
	WorkflowRun       = "workflow_run"
	PullRequest       = "pull_request"
	PullRequestReview = "pull_request_review"
	IssueComment      = "issue_comment"
)

// Kind is the kind of GitHub's deliveries on the reports stream
// (ingest.Submission.Kind): the driver's name, github.Name.
const Kind = "github"

// Known reports whether redfix acts on events named event.
func Known(event string) bool {
	switch event {
	case Ping, WorkflowRun, PullRequest, PullRequestReview, IssueComment:
		return true
	}
	return false
}

// Delivery is a decoded webhook of an event redfix acts on.
type Delivery struct {
	Event  string
	Repo   string // "owner/name"
	Run    *gogithub.WorkflowRunEvent
	PR     *gogithub.PullRequestEvent
	Review *gogithub.PullRequestReviewEvent
	// Comment is a comment on an issue or a pull request (GitHub sends
	// both as issue_comment; the issue's pull_request field tells them
	// apart).
	Comment *gogithub.IssueCommentEvent
}

// Decode parses a payload of one of the events redfix acts on.
func Decode(event string, payload []byte) (Delivery, error) {
	d := Delivery{Event: event}
	var repo *gogithub.Repository
	var err error
	switch event {
	case WorkflowRun:
		d.Run = new(gogithub.WorkflowRunEvent)
		err = json.Unmarshal(payload, d.Run)
		repo = d.Run.GetRepo()
		if err == nil && d.Run.WorkflowRun == nil {
			err = fmt.Errorf("no workflow_run object")
		}
	case PullRequest:
		d.PR = new(gogithub.PullRequestEvent)
		err = json.Unmarshal(payload, d.PR)
		repo = d.PR.GetRepo()
		if err == nil && d.PR.PullRequest == nil {
			err = fmt.Errorf("no pull_request object")
		}
	case PullRequestReview:
		d.Review = new(gogithub.PullRequestReviewEvent)
		err = json.Unmarshal(payload, d.Review)
		repo = d.Review.GetRepo()
		if err == nil && (d.Review.PullRequest == nil || d.Review.Review == nil) {
			err = fmt.Errorf("no pull_request or review object")
		}
	case IssueComment:
		d.Comment = new(gogithub.IssueCommentEvent)
		err = json.Unmarshal(payload, d.Comment)
		repo = d.Comment.GetRepo()
		if err == nil && (d.Comment.Issue == nil || d.Comment.Comment == nil) {
			err = fmt.Errorf("no issue or comment object")
		}
	default:
		return d, fmt.Errorf("event %s is not one redfix acts on", event)
	}
	if err != nil {
		return d, fmt.Errorf("decode %s payload: %w", event, err)
	}
	d.Repo = repo.GetFullName()
	if d.Repo == "" || !strings.Contains(d.Repo, "/") {
		return d, fmt.Errorf("decode %s payload: no repository full_name", event)
	}
	return d, nil
}

// Skip says why redfix does nothing with the delivery, or "" when it acts.
func (d Delivery) Skip(f Filter) string {
	if !f.Allowed(d.Repo) {
		return fmt.Sprintf("repository %s is not in the allowlist", d.Repo)
	}
	switch {
	case d.Run != nil:
		return f.Skip(d.Run.GetRepo(), d.Run.GetWorkflowRun())
	case d.PR != nil:
		switch a := d.PR.GetAction(); a {
		case "closed", "reopened":
		default:
			return "pull_request action " + a + " is not tracked"
		}
		if ref := d.PR.GetPullRequest().GetHead().GetRef(); !strings.HasPrefix(ref, forge.BranchPrefix) {
			return fmt.Sprintf("pull request from %q is not redfix's", ref)
		}
	case d.Review != nil:
		if a := d.Review.GetAction(); a != "submitted" {
			return "pull_request_review action " + a + " is not tracked"
		}
		if ref := d.Review.GetPullRequest().GetHead().GetRef(); !strings.HasPrefix(ref, forge.BranchPrefix) {
			return fmt.Sprintf("pull request from %q is not redfix's", ref)
		}
	case d.Comment != nil:
		if a := d.Comment.GetAction(); a != "created" {
			return "issue_comment action " + a + " is not tracked"
		}
		if !forge.IsCommand(d.Comment.GetComment().GetBody()) {
			return "comment is not a /redfix command"
		}
	}
	return ""
}
