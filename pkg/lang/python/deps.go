package python

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/untrusted"
)

// maxDepFileBytes bounds a dependency file read from a checkout.
const maxDepFileBytes = 1 << 20

// maxIncludeDepth bounds requirement files including one another.
const maxIncludeDepth = 5

// declared is what a checkout's requirement files declare, made fit for
// pip: requirement lines (and the few global options kept), constraint
// lines, the files read, and what was left out and why.
type declared struct {
	requirements []string
	constraints  []string
	files        []string
	notes        []string
}

// readRequirements reads the requirement files of the checkout at dir: the
// root's requirements*.txt and requirements/*.txt (files about docs left
// out), and the files they include with -r and -c, beneath the checkout.
//
// Lines are kept for pip with the project itself left out (editable
// installs and local paths: the tests import the checkout's own code from
// the checkout, and a virtual environment kept across jobs must not point
// into one job's checkout), and with the options that name another index
// or link dropped: dependencies come from the configured index.
func readRequirements(dir string) declared {
	var d declared
	var roots []string
	if ents, err := untrusted.ReadDir(dir, "."); err == nil {
		for _, e := range ents {
			if n := e.Name(); strings.HasPrefix(n, "requirements") && strings.HasSuffix(n, ".txt") && !strings.Contains(n, "doc") {
				roots = append(roots, n)
			}
		}
	}
	if ents, err := untrusted.ReadDir(dir, "requirements"); err == nil {
		for _, e := range ents {
			if n := e.Name(); strings.HasSuffix(n, ".txt") && !strings.Contains(n, "doc") {
				roots = append(roots, "requirements/"+n)
			}
		}
	}
	sort.Strings(roots)
	seen := map[string]bool{}
	for _, rel := range roots {
		d.read(dir, rel, false, 0, seen)
	}
	return d
}

// read reads one requirement file (constraints: a constraints file).
func (d *declared) read(dir, rel string, constraints bool, depth int, seen map[string]bool) {
	if seen[rel] {
		return
	}
	seen[rel] = true
	text, err := untrusted.ReadText(dir, rel, maxDepFileBytes)
	if err != nil {
		d.notes = append(d.notes, fmt.Sprintf("%s: not read: %v", rel, err))
		return
	}
	d.files = append(d.files, rel)
	for _, line := range logicalLines(text) {
		if !strings.HasPrefix(line, "-") {
			req, why := requirement(line)
			switch {
			case why != "":
				d.notes = append(d.notes, fmt.Sprintf("%s: %q left out: %s", rel, line, why))
			case constraints:
				d.constraints = append(d.constraints, req)
			default:
				d.requirements = append(d.requirements, req)
			}
			continue
		}
		opt, val := option(line)
		switch opt {
		case "-r", "--requirement", "-c", "--constraint":
			inc := path.Clean(path.Join(path.Dir(rel), val))
			switch {
			case val == "" || strings.Contains(val, "://") || path.IsAbs(val) || inc == ".." || strings.HasPrefix(inc, "../"):
				d.notes = append(d.notes, fmt.Sprintf("%s: %q left out: not a file of the checkout", rel, line))
			case depth >= maxIncludeDepth:
				d.notes = append(d.notes, fmt.Sprintf("%s: %q left out: included more than %d deep", rel, line, maxIncludeDepth))
			default:
				d.read(dir, inc, constraints || opt == "-c" || opt == "--constraint", depth+1, seen)
			}
		case "--pre", "--prefer-binary", "--require-hashes":
			if !constraints && val == "" {
				d.requirements = append(d.requirements, opt)
			}
		case "--only-binary", "--no-binary":
			if !constraints && val != "" && !strings.ContainsAny(val, " \t") {
				d.requirements = append(d.requirements, opt+"="+val)
			}
		case "-e", "--editable":
			d.notes = append(d.notes, fmt.Sprintf("%s: %q left out: editable installs are not made (the checkout's own code is imported from the checkout)", rel, line))
		case "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "--no-index":
			d.notes = append(d.notes, fmt.Sprintf("%s: %q left out: dependencies come from the configured index", rel, line))
		default:
			d.notes = append(d.notes, fmt.Sprintf("%s: %q left out: an option redfix does not pass to pip", rel, line))
		}
	}
}

// logicalLines are a requirement file's lines as pip reads them: joined
// where a line ends with a backslash, without comments, trimmed, the blank
// ones left out.
func logicalLines(text string) []string {
	var out []string
	var cur strings.Builder
	for _, raw := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.HasSuffix(raw, `\`) {
			cur.WriteString(strings.TrimSuffix(raw, `\`))
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(raw)
		line := cur.String()
		cur.Reset()
		if i := commentStart(line); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	if line := strings.TrimSpace(cur.String()); line != "" {
		out = append(out, line)
	}
	return out
}

// commentStart is where a comment starts: a '#' at the line's start or
// after a blank, -1 when there is none.
func commentStart(line string) int {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			return i
		}
	}
	return -1
}

// option splits an option line: "-r x.txt", "-rx.txt", "--requirement=x.txt".
func option(line string) (opt, val string) {
	if strings.HasPrefix(line, "--") {
		name, rest, ok := strings.Cut(line, "=")
		if !ok {
			f := strings.Fields(line)
			return f[0], strings.TrimSpace(strings.TrimPrefix(line, f[0]))
		}
		return name, strings.TrimSpace(rest)
	}
	if len(line) < 2 {
		return line, ""
	}
	return line[:2], strings.TrimSpace(line[2:])
}

// requirement makes one requirement (a line of a requirement file, or a
// string of pyproject.toml or setup.cfg) fit for a requirements file of
// redfix's: the specifier and its --hash options, nothing else on the line.
// why says why one is left out: a local path (the project itself, or
// another of the checkout's), or a text that is not one requirement.
func requirement(s string) (req, why string) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", "empty"
	case strings.ContainsAny(s, "\r\n\x00"):
		return "", "not one line"
	case strings.HasPrefix(s, "-"):
		return "", "an option, not a requirement"
	}
	fields := strings.Fields(s)
	first := fields[0]
	if strings.HasPrefix(first, ".") || strings.HasPrefix(first, "/") || strings.HasPrefix(first, "~") ||
		strings.HasPrefix(first, "file:") || strings.Contains(s, "@ file:") || strings.Contains(s, "@file:") ||
		strings.Contains(first, "/") && !strings.Contains(first, "://") {
		return "", "a local path (the checkout's own code is imported from the checkout)"
	}
	// The specifier is the words up to the first option; of the options,
	// only --hash is a requirement's own.
	spec := fieldsBeforeOption(fields)
	kept := append([]string(nil), spec...)
	for i := len(spec); i < len(fields); i++ {
		switch f := fields[i]; {
		case strings.HasPrefix(f, "--hash="):
			kept = append(kept, f)
		case f == "--hash" && i+1 < len(fields):
			kept = append(kept, "--hash="+fields[i+1])
			i++
		}
	}
	return strings.Join(kept, " "), ""
}

// fieldsBeforeOption are a requirement line's words up to its first option.
func fieldsBeforeOption(fields []string) []string {
	for i, f := range fields {
		if strings.HasPrefix(f, "-") {
			return fields[:i]
		}
	}
	return fields
}
