package node

import (
	"path"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// What changes in a JavaScript or TypeScript failure from one machine to
// another, taken out before triage fingerprints it (pkg/triage asks for it
// as a capability): the checkout's root in the absolute paths its test
// file and its message name (node:test's and jest's default reports do not
// show the root, so the paths stay whole), and the colour codes of its
// message.

// absPathRE is the absolute path of a JavaScript or TypeScript file. It
// starts the message or follows a space, a quote, a parenthesis.
var absPathRE = regexp.MustCompile(`(?:^|[\s'"(\[])(?:file://)?/[^\s'"():,]+\.(?:js|jsx|mjs|cjs|ts|tsx|mts|cts)\b`)

// NormalizeFailure is f as its fingerprint reads it, ok false when f is
// not a failure of JavaScript or TypeScript tests (neither its test file
// nor a frame is one): an absolute test file and the absolute paths of
// the files the message names are cut to their last directory and file
// name, and the message's colour codes taken out.
func (Driver) NormalizeFailure(f task.Failure) (task.Failure, bool) {
	if !ownFailure(f) {
		return f, false
	}
	if path.IsAbs(f.Package) {
		f.Package = lastDirAndFile(f.Package)
	}
	f.Message = absPathRE.ReplaceAllStringFunc(report.StripANSI(f.Message), func(m string) string {
		lead, p := "", m
		if !strings.HasPrefix(m, "/") && !strings.HasPrefix(m, "file:") {
			lead, p = m[:1], m[1:]
		}
		return lead + lastDirAndFile(strings.TrimPrefix(p, "file://"))
	})
	return f, true
}

// ownFailure reports a failure of JavaScript or TypeScript tests: its
// test file, or the file of a frame (file:line), is one.
func ownFailure(f task.Failure) bool {
	if isSourceExt(path.Ext(f.Package)) {
		return true
	}
	for _, fr := range f.Frames {
		file := fr
		if i := strings.LastIndex(fr, ":"); i >= 0 {
			file = fr[:i]
		}
		if isSourceExt(path.Ext(file)) {
			return true
		}
	}
	return false
}

// lastDirAndFile is a path cut to its last directory and file name, as
// triage keys frames: checkouts in different places agree on it.
func lastDirAndFile(file string) string {
	file = strings.ReplaceAll(file, "\\", "/")
	dir, base := path.Split(file)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return base
	}
	return path.Base(dir) + "/" + base
}
