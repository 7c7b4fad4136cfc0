// Package findings is the vocabulary of static checks' complaints: a
// finding of a tool (its text for people, a key to compare checkouts by),
// and which findings a change brought, compared with a base's (each base
// finding excuses one head finding with its key). The drivers run their
// languages' checks and key their findings (pkg/lang/<name>).
package findings

// Finding is one complaint of a tool: Text for people, Key to compare
// checkouts.
type Finding struct{ Key, Text string }

// Compare returns the findings of head that base does not have (each base
// finding excuses one head finding with its key), and how many head
// findings were already there.
func Compare(head, base []Finding) (fresh []Finding, old int) {
	fresh, before := Split(head, base)
	return fresh, len(before)
}

// Split divides head's findings into those base does not have (each base
// finding excuses one head finding with its key) and those it has.
func Split(head, base []Finding) (fresh, before []Finding) {
	known := map[string]int{}
	for _, f := range base {
		known[f.Key]++
	}
	for _, f := range head {
		if known[f.Key] > 0 {
			known[f.Key]--
			before = append(before, f)
			continue
		}
		fresh = append(fresh, f)
	}
	return fresh, before
}

// Texts are the findings' texts.
func Texts(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Text
	}
	return out
}
