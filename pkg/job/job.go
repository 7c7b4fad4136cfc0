// Package job defines the message that the triage service queues and the
// workers consume. It is the only contract between cmd/bot and cmd/worker.
package job

import (
	"encoding/json"
	"fmt"

	"github.com/redfix/redfix/pkg/task"
)

// Job asks a worker to repair one task. Its ID is the failure group's
// fingerprint; the queue deduplicates on it and the task's ID. A retry or
// a revision asked for on a forge has an ID of its own (RetryID,
// RevisionID), so that the queue takes it.
type Job struct {
	ID   string    `json:"id"`
	Task task.Task `json:"task"`
	// Revision, when set, sends redfix's pull request back to a worker
	// with a reviewer's words, instead of repairing from the failing
	// commit.
	Revision *Revision `json:"revision,omitempty"`
}

// Revision is what a reviewer asked of one of redfix's pull requests: the
// worker starts from the branch's head, gives the agent the reviewer's
// words (untrusted text, fenced as such), runs the gates and the judge
// again and pushes one more commit to the same branch.
type Revision struct {
	Repo   string `json:"repo"` // the repository's path on its forge ("owner/name")
	Number int    `json:"number"`
	Branch string `json:"branch"`
	// Head is the branch's commit when the revision was asked for; the
	// push is refused if the branch moved since.
	Head string `json:"head"`
	// Request is the reviewer's words; Reviewer their login.
	Request  string `json:"request"`
	Reviewer string `json:"reviewer"`
	// N counts the pull request's revisions, this one included.
	N int `json:"n"`
}

// RetryID is the job ID of the n-th retry of the group fingerprint.
func RetryID(fingerprint string, n int) string { return fmt.Sprintf("%s/retry-%d", fingerprint, n) }

// RevisionID is the job ID of the n-th revision of pull request number of
// the group fingerprint.
func RevisionID(fingerprint string, number, n int) string {
	return fmt.Sprintf("%s/pr-%d/revision-%d", fingerprint, number, n)
}

// New makes the job for a task.
func New(t task.Task) Job { return Job{ID: t.Fingerprint, Task: t} }

// Encode serializes the job for the queue.
func (j Job) Encode() ([]byte, error) { return json.Marshal(j) }

// Decode parses a queued job and checks that it can be worked on.
func Decode(data []byte) (Job, error) {
	var j Job
	if err := json.Unmarshal(data, &j); err != nil {
		return Job{}, fmt.Errorf("decode job: %w", err)
	}
	if err := j.Validate(); err != nil {
		return Job{}, err
	}
	return j, nil
}

// Validate reports what a job lacks to be worked on.
func (j Job) Validate() error {
	switch {
	case j.ID == "":
		return fmt.Errorf("job has no id")
	case j.Task.Repo == "":
		return fmt.Errorf("job %s: task has no repository", j.ID)
	case j.Task.Commit == "":
		return fmt.Errorf("job %s: task has no commit", j.ID)
	case len(j.Task.Failures) == 0:
		return fmt.Errorf("job %s: task has no failing test", j.ID)
	case j.Revision != nil && (j.Revision.Number <= 0 || j.Revision.Branch == "" || j.Revision.Head == "" || j.Revision.Repo == ""):
		return fmt.Errorf("job %s: revision names no pull request, branch or head", j.ID)
	}
	return nil
}
