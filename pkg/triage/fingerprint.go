package triage

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/repourl"
	"github.com/redfix/redfix/pkg/task"
)

// fingerprintFrames is how many of a failure's top frames its fingerprint
// keeps.
const fingerprintFrames = 3

// Fingerprint is the identity of a failure, stable across runs: a hex hash of
// the repository, the test's ID, the failure's message with what changes
// from run to run taken out (see NormalizeMessage), and its top frames with
// line numbers dropped (the file, and the function where a stack trace names
// it). Two runs of one failure share a fingerprint; another assertion of the
// same test, or the same assertion in another test, does not.
//
// Frames keep only their last directory and file name, so that checkouts in
// different places (CI's, a workspace's) agree. So do the absolute paths of
// a JavaScript failure's test file and message (a report that does not show
// its checkout's root keeps them), whose colour codes are taken out too.
func Fingerprint(repo string, f task.Failure) string {
	id, msg := f.ID(), f.Message
	if jsFailure(f) {
		if path.IsAbs(f.Package) {
			f.Package = shortPath(f.Package)
			id = f.ID()
		}
		msg = jsAbsPathRE.ReplaceAllStringFunc(report.StripANSI(msg), func(m string) string {
			lead, p := "", m
			if !strings.HasPrefix(m, "/") && !strings.HasPrefix(m, "file:") {
				lead, p = m[:1], m[1:]
			}
			return lead + shortPath(strings.TrimPrefix(p, "file://"))
		})
	}
	h := sha256.New()
	for _, part := range []string{
		"v1",
		normalizeRepo(repo),
		id,
		NormalizeMessage(msg),
		strings.Join(frameKeys(f), "\n"),
	} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// jsAbsPathRE is the absolute path of a JavaScript or TypeScript file.
// It starts the message or follows a space, a quote, a parenthesis.
var jsAbsPathRE = regexp.MustCompile(`(?:^|[\s'"(\[])(?:file://)?/[^\s'"():,]+\.(?:js|jsx|mjs|cjs|ts|tsx|mts|cts)\b`)

// jsFailure reports a failure of JavaScript or TypeScript tests: its test
// file, or a frame, is one.
func jsFailure(f task.Failure) bool {
	if task.IsTestFilePath(f.Package) && !strings.HasSuffix(f.Package, ".py") {
		return true
	}
	for _, fr := range f.Frames {
		if file, _ := splitFrame(fr); task.IsTestFilePath(file) && !strings.HasSuffix(file, ".py") {
			return true
		}
	}
	return false
}

// Group is failures that share a fingerprint.
type Group struct {
	Fingerprint string
	Failures    []task.Failure
}

// Tests are the group's distinct test IDs, in the order first seen.
func (g Group) Tests() []string {
	var ids []string
	seen := map[string]bool{}
	for _, f := range g.Failures {
		if id := f.ID(); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// GroupFailures groups failures by fingerprint, groups in the order their
// first failure appears.
func GroupFailures(repo string, failures []task.Failure) []Group {
	var groups []Group
	index := map[string]int{}
	for _, f := range failures {
		fp := Fingerprint(repo, f)
		i, ok := index[fp]
		if !ok {
			i = len(groups)
			index[fp] = i
			groups = append(groups, Group{Fingerprint: fp})
		}
		groups[i].Failures = append(groups[i].Failures, f)
	}
	return groups
}

func normalizeRepo(repo string) string {
	if c, err := repourl.Canonical(repo); err == nil {
		return c
	}
	r := strings.TrimSpace(repo)
	r = strings.TrimRight(r, "/")
	r = strings.TrimSuffix(r, ".git")
	return strings.ToLower(r)
}

var (
	// A temporary path starts a word: t.TempDir(), os.MkdirTemp, macOS's
	// per-user directories, Windows' Temp. Its end is the end of the path.
	tmpPathRE = regexp.MustCompile(`(^|[\s"'` + "`" + `=(\[{<:,])((?:/private)?(?:/var/folders|/var/tmp|/tmp)(?:/[^\s"'` + "`" + `:,;)\]}>]*)?|(?i:[a-z]:\\(?:[^\s"'\\]+\\)*Temp\\[^\s"']*))`)
	addrRE    = regexp.MustCompile(`\b0x[0-9a-fA-F]+\b`)
	uuidRE    = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	hexRE     = regexp.MustCompile(`\b[0-9a-f]{7,}\b`)
	timeRE    = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`)
	durRE     = regexp.MustCompile(`\b(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|h|m|s))+\b`)
	numberRE  = regexp.MustCompile(`-?\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b`)
	spaceRE   = regexp.MustCompile(`\s+`)
)

// NormalizeMessage takes out of a failure message what changes between runs
// of the same failure: temporary paths (the system's own temporary
// directory included), addresses, hashes and UUIDs, timestamps, durations
// and numbers (goroutine ids, ports, counts, sizes), and collapses white
// space. What the message says — its words, the names it quotes, the shape
// of the values — is kept: "got N, want N" and "index out of range [N] with
// length N" stay apart, and quoted strings stay (minus the volatile parts
// above), because they usually name what is wrong. Digits inside
// identifiers (utf8, Test2, v2) are kept.
//
// Numbers go because a failing value differs between two runs of one bug
// more often than two bugs differ only in a number; the test ID and the
// frames, which are in the fingerprint too, tell most of those apart.
func NormalizeMessage(msg string) string {
	s := msg
	if tmp := strings.TrimRight(os.TempDir(), "/"); len(tmp) > 1 {
		s = strings.ReplaceAll(s, tmp+"/", "/tmp/")
	}
	s = tmpPathRE.ReplaceAllString(s, "${1}<tmp>")
	s = addrRE.ReplaceAllString(s, "0x?")
	s = uuidRE.ReplaceAllString(s, "<uuid>")
	s = hexRE.ReplaceAllStringFunc(s, func(m string) string {
		// Hashes and ids mix digits and letters; all-letter words
		// (deadbeef, facade) stay, all-digit ones are numbers.
		if strings.ContainsAny(m, "0123456789") && strings.ContainsAny(m, "abcdef") {
			return "<hex>"
		}
		return m
	})
	s = timeRE.ReplaceAllString(s, "<time>")
	s = durRE.ReplaceAllString(s, "<dur>")
	s = numberRE.ReplaceAllString(s, "N")
	return spaceRE.ReplaceAllString(strings.TrimSpace(s), " ")
}

// stackCallRE is a call line of a Go stack trace: "pkg/path.Func(args)" or
// "pkg.(*T).Method(...)"; the next line names its file.
var (
	stackCallRE = regexp.MustCompile(`^(?:created by )?([\w./\-]+(?:\.\(\*?\w+(?:\[[^\]]*\])?\))?(?:\.[\w\-]+)+)(?:\(.*\))?(?: in goroutine \d+)?$`)
	stackFileRE = regexp.MustCompile(`^\s+(\S+\.go):(\d+)`)
)

// frameKeys are the failure's top frames without line numbers: the last
// directory and the file, and the function when a stack trace in the output
// names it.
func frameKeys(f task.Failure) []string {
	funcs := stackFunctions(f.Output)
	var keys []string
	seen := map[string]bool{}
	for _, fr := range f.Frames {
		file, line := splitFrame(fr)
		key := shortPath(file)
		if fn, ok := funcs[file+":"+line]; ok {
			key += " " + fn
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		keys = append(keys, key)
		if len(keys) == fingerprintFrames {
			break
		}
	}
	return keys
}

// stackFunctions maps "file:line" to the function a Go stack trace names at
// that place, its package path cut to the last element.
func stackFunctions(output string) map[string]string {
	funcs := map[string]string{}
	lines := strings.Split(output, "\n")
	for i := 0; i+1 < len(lines); i++ {
		call := stackCallRE.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if call == nil {
			continue
		}
		loc := stackFileRE.FindStringSubmatch(lines[i+1])
		if loc == nil {
			continue
		}
		key := loc[1] + ":" + loc[2]
		if _, ok := funcs[key]; !ok {
			funcs[key] = path.Base(call[1])
		}
	}
	return funcs
}

func splitFrame(fr string) (file, line string) {
	i := strings.LastIndex(fr, ":")
	if i < 0 {
		return fr, ""
	}
	return fr[:i], fr[i+1:]
}

func shortPath(file string) string {
	file = strings.ReplaceAll(file, "\\", "/")
	dir, base := path.Split(file)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return base
	}
	return path.Base(dir) + "/" + base
}
