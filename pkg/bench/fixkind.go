package bench

import (
	"regexp"
	"strings"
)

// Kinds of a mined change, as ClassifyChange tells them.
const (
	KindFix     = "fix"     // a bug fix: behaviour that existed was wrong
	KindFeature = "feature" // new behaviour, or a redesign
	KindUnsure  = "unsure"  // the evidence does not lean either way
)

// ChangeEvidence is what tells a bug fix from a feature.
type ChangeEvidence struct {
	// Subject and Body are the commit's message (a merge's subject names
	// its branch, which is read too).
	Subject, Body string
	// OldBehaviour: the fix's tests compile and run against its parent
	// with only the test files changed, and fail there (what a mined task
	// shows): they exercise behaviour that existed before the change.
	OldBehaviour bool
	// NewAPI: the fix's tests do not build against the parent (they call
	// what the change added).
	NewAPI bool
}

var (
	// fixWordRE: the words of a bug fix's message.
	fixWordRE = regexp.MustCompile(`(?i)\b(fix(es|ed|ing)?|bug(s|fix)?|regression|crash(es)?|panic(s|king)?|broken|wrong(ly)?|incorrect(ly)?|correct(ly|s|ed)?|should(n't| not)?|shouldnt|doesn't|does not|dont|don't|not (work|run|set|shown?|respect|honou?r)\w*|missing|nil|prevent|avoid|ignored?|instead of|hotfix|honou?red|consisten(t|cy)|duplication|invalid)\b`)
	// featureWordRE: the words of a feature's or a redesign's.
	featureWordRE = regexp.MustCompile(`(?i)\b(add(s|ed|ing)?|feat(ure)?|support(s|ed)?|implement(s|ed)?|introduc(e|es|ed)|new|allow(s|ed)?|enable(s|d)?|refactor(s|ed|ing)?|rename(s|d)?|collapse|cleanup|clean up|remov(e|es|ed)|deprecat(e|ed|ion)|rework|redesign|move(s|d)?|coverage|lint(er)?|bump|docs?|option(al)?|customi[sz](e|ed|able)|configurable|by default|export(ing)?|user friendly)\b`)
	// linkRE: a link to the issue a change closes.
	linkRE = regexp.MustCompile(`(?i)\b(fix(es|ed)?|close(s|d)?|resolve(s|d)?)\s*:?\s*(#|gh-|https?://\S+/issues/)\d+`)
	// tagRE: a message's leading tag, "Fix:(issue_12) ", "fix(help): ",
	// "feat: ", "Feature: (issue_3) ".
	tagRE = regexp.MustCompile(`(?i)^\s*(fix|bugfix|hotfix|feat|feature)\s*(\([^)]*\))?\s*:\s*(\([^)]*\))?\.?\s*`)
	// mergeRE: the merge's own subject that firstParentLog puts after its
	// title.
	mergeRE = regexp.MustCompile(`\(Merge pull request #\d+ from [^/\s]+/(\S+)\)$|^Merge pull request #\d+ from [^/\s]+/(\S+)$`)
)

// ClassifyChange tells a bug fix from a feature by the change's tests
// (behaviour that existed before it, failing there), its message's words
// (its title's most, a leading tag's and a branch's name's less: some
// projects tag every change "Fix:") and its links, and says why in a few
// words.
func ClassifyChange(e ChangeEvidence) (kind string, why []string) {
	title, branch := e.Subject, ""
	if m := mergeRE.FindStringSubmatchIndex(title); m != nil {
		for g := 2; g < len(m); g += 2 {
			if m[g] >= 0 {
				branch = strings.NewReplacer("-", " ", "_", " ", "/", " ").Replace(title[m[g]:m[g+1]])
			}
		}
		title = strings.TrimSpace(title[:m[0]])
	}
	score := 0
	if m := tagRE.FindStringSubmatch(title); m != nil {
		title = title[len(m[0]):]
		// A conventional commit's type ("fix(scope): ") says what the
		// change is; a project's own tag ("Fix:(issue_12)") less.
		weight := 1
		if m[1] == strings.ToLower(m[1]) && m[3] == "" {
			weight = 2
		}
		if t := strings.ToLower(m[1]); strings.HasPrefix(t, "feat") {
			score -= weight
			why = append(why, "tagged a feature")
		} else {
			score += weight
			why = append(why, "tagged a fix")
		}
	}
	if linkRE.MatchString(e.Subject + "\n" + e.Body) {
		score += 2
		why = append(why, "closes an issue")
	}
	if d := lean(title); d != 0 {
		score += 2 * d
		why = append(why, map[int]string{1: "a fix's words", -1: "a feature's words"}[d])
	}
	score += lean(branch) + lean(e.Body)
	switch {
	case e.OldBehaviour:
		score++
		why = append(why, "its tests fail on the old code's own API")
	case e.NewAPI:
		score -= 2
		why = append(why, "its tests need new API")
	}
	switch {
	case score >= 2:
		return KindFix, why
	case score <= -1:
		return KindFeature, why
	}
	return KindUnsure, why
}

// lean is 1 where text has more of a fix's words than a feature's, -1
// where fewer, 0 where as many.
func lean(text string) int {
	fixes, features := len(fixWordRE.FindAllString(text, -1)), len(featureWordRE.FindAllString(text, -1))
	switch {
	case fixes > features:
		return 1
	case features > fixes:
		return -1
	}
	return 0
}
