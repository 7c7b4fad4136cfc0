// Package job defines the message that the triage service queues and the
// workers consume. It is the only contract between cmd/bot and cmd/worker.
package job

import (
	"encoding/json"
	"fmt"

	"github.com/redfix/redfix/pkg/task"
)

// Job asks a worker to repair one task. Its ID is the failure group's
// fingerprint; the queue deduplicates on it and the task's ID.
type Job struct {
	ID   string    `json:"id"`
	Task task.Task `json:"task"`
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
	}
	return nil
}
