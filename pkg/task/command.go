package task

import "time"

// Command is one command a person gave redfix on one of its pull requests
// (/redfix retry, a review requesting changes, …), and what came of it.
type Command struct {
	Repo   string    `json:"repo"` // "owner/name"
	Number int       `json:"number"`
	Verb   string    `json:"verb"`
	User   string    `json:"user"`
	Result string    `json:"result"`
	At     time.Time `json:"at"`
}
