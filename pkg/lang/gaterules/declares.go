package gaterules

import "regexp"

// notNames are words a declaration's pattern can take for a name.
var notNames = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true, "function": true, "return": true, "with": true}

// Declares is the revert gate's reading of a line of code (a driver's
// DeclarationRule): the name the first of res that matches it captures,
// "" for none or for a keyword.
func Declares(res []*regexp.Regexp) func(line string) string {
	return func(line string) string {
		for _, re := range res {
			if m := re.FindStringSubmatch(line); m != nil && !notNames[m[1]] {
				return m[1]
			}
		}
		return ""
	}
}
