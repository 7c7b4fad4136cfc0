package server

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// knownParameters refuses a query that holds a parameter the route does not
// take, naming them all, so that a misspelt one (`god=` for `good=`) is a
// 400 rather than a setting silently lost.
func knownParameters(q url.Values, known ...string) error {
	var unknown []string
	for name := range q {
		if !slices.Contains(known, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	takes := "none"
	if len(known) > 0 {
		takes = strings.Join(known, ", ")
	}
	word := "parameter"
	if len(unknown) > 1 {
		word = "parameters"
	}
	return &Error{Code: http.StatusBadRequest, Message: "unknown " + word + " " + quoteAll(unknown) + " (this route takes " + takes + ")"}
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	return strings.Join(q, ", ")
}
