package triage

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/lang"
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
// different places (CI's, a workspace's) agree. What else of a failure
// differs from one machine to another is its language's to say: the first
// of drivers that normalises failures (FingerprintNormalizer) and claims f
// gives the test's ID and the message the fingerprint reads.
func Fingerprint(repo string, f task.Failure, drivers ...lang.Driver) string {
	id, msg := f.ID(), f.Message
	if n, ok := normalize(f, drivers); ok {
		id, msg = n.ID(), n.Message
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

// FingerprintNormalizer is a language driver that takes out of its
// language's failures what changes from one machine to another (absolute
// paths, colour codes), before they are fingerprinted.
type FingerprintNormalizer interface {
	// NormalizeFailure is f as its fingerprint reads it (its package and
	// message), ok false when f is not a failure of the driver's tests.
	NormalizeFailure(f task.Failure) (task.Failure, bool)
}

// normalize is f normalised by the first of drivers that claims it.
func normalize(f task.Failure, drivers []lang.Driver) (task.Failure, bool) {
	for _, d := range drivers {
		if n, ok := d.(FingerprintNormalizer); ok {
			if nf, ok := n.NormalizeFailure(f); ok {
				return nf, true
			}
		}
	}
	return f, false
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

// GroupFailures groups failures by fingerprint (each normalised by the
// drivers, see Fingerprint), groups in the order their first failure
// appears.
func GroupFailures(repo string, failures []task.Failure, drivers ...lang.Driver) []Group {
	var groups []Group
	index := map[string]int{}
	for _, f := range failures {
		fp := Fingerprint(repo, f, drivers...)
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
