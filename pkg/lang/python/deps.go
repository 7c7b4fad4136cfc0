package python

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/untrusted"
)

// maxDepFileBytes bounds a dependency file read from a checkout.
const maxDepFileBytes = 1 << 20

// declaredBy is a requirement string of pyproject.toml or setup.cfg and
// where it is from ("pyproject.toml [project] dependencies"), as the
// dependency script says (scripts/deps.py).
type declaredBy struct {
	Requirement string `json:"requirement"`
	From        string `json:"from"`
	// Optional: its install may fail without failing the setup.
	Optional bool `json:"optional"`
}

// maxIncludeDepth bounds requirement files including one another.
const maxIncludeDepth = 5

// declared is what a checkout's requirement files declare, made fit for
// pip: requirement lines (and the few global options kept), each with the
// dependency group of the file it is from (groups, "" the base), constraint
// lines, the files read, and what was left out and why.
type declared struct {
	requirements []string
	groups       []string
	// named are the groups the root files are named for, sorted.
	named       []string
	constraints []string
	files       []string
	notes       []string
}

// readRequirements reads the requirement files of the checkout at dir: the
// root's requirements*.txt, *-requirements.txt and requirements/*.txt
// (files about docs left out), the base's first (see fileGroup), and the
// files they include with -r and -c, beneath the checkout.
//
// Only plain names from the configured index are kept for pip (see
// requirement), and the few options that narrow which of its releases are
// taken (see keptOption). The project itself is left out (editable
// installs and local paths: the tests import the checkout's own code from
// the checkout, and a virtual environment kept across jobs must not point
// into one job's checkout), and so is whatever pip would fetch from
// elsewhere or build: direct references, URLs, version-control URLs,
// archives, the options that name another index or links, --no-binary.
// Each line left out is a note naming the file, the line and why.
func readRequirements(dir string) declared {
	var d declared
	var roots []string
	if ents, err := untrusted.ReadDir(dir, "."); err == nil {
		for _, e := range ents {
			if n := e.Name(); strings.HasSuffix(n, ".txt") && (strings.HasPrefix(n, "requirements") || strings.HasSuffix(n, "requirements.txt")) && !strings.Contains(n, "doc") {
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
	// The base's files first: a file of a group that includes the base
	// (-r requirements.txt) must not make the base that group's.
	sort.Slice(roots, func(i, j int) bool {
		bi, bj := fileGroup(roots[i]) == "", fileGroup(roots[j]) == ""
		if bi != bj {
			return bi
		}
		return roots[i] < roots[j]
	})
	seen := map[string]bool{}
	for _, rel := range roots {
		g := fileGroup(rel)
		if g != "" && !slices.Contains(d.named, g) {
			d.named = append(d.named, g)
		}
		d.read(dir, rel, g, false, 0, seen)
	}
	slices.Sort(d.named)
	return d
}

// read reads one requirement file of group (constraints: a constraints
// file).
func (d *declared) read(dir, rel, group string, constraints bool, depth int, seen map[string]bool) {
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
	for _, l := range logicalLines(text) {
		leftOut := func(why string) {
			d.notes = append(d.notes, fmt.Sprintf("%s:%d: %q left out: %s", rel, l.no, l.text, why))
		}
		if !strings.HasPrefix(l.text, "-") {
			req, why := requirement(l.text)
			switch {
			case why != "":
				leftOut(why)
			case constraints:
				d.constraints = append(d.constraints, req)
			default:
				d.requirements = append(d.requirements, req)
				d.groups = append(d.groups, group)
			}
			continue
		}
		opt, val := option(l.text)
		if opt == "-r" || opt == "--requirement" || opt == "-c" || opt == "--constraint" {
			inc := path.Clean(path.Join(path.Dir(rel), val))
			switch {
			case val == "" || strings.Contains(val, "://") || path.IsAbs(val) || inc == ".." || strings.HasPrefix(inc, "../"):
				leftOut("not a file of the checkout")
			case depth >= maxIncludeDepth:
				leftOut(fmt.Sprintf("included more than %d deep", maxIncludeDepth))
			default:
				d.read(dir, inc, group, constraints || opt == "-c" || opt == "--constraint", depth+1, seen)
			}
			continue
		}
		kept, why := keptOption(opt, val)
		switch {
		case why != "":
			leftOut(why)
		case kept != "" && !constraints:
			d.requirements = append(d.requirements, kept)
			d.groups = append(d.groups, group)
		}
	}
}

// keptOption is a global option of a requirement file as redfix passes it
// to pip ("" for none), or why it is left out. Only options that change
// which releases of the configured index are taken are kept: --pre,
// --prefer-binary, --require-hashes, and --only-binary naming packages.
// Whatever would take packages from elsewhere, or build them from source
// (--no-binary, --only-binary=:none:), is left out.
func keptOption(opt, val string) (kept, why string) {
	switch opt {
	case "--pre", "--prefer-binary", "--require-hashes":
		if val != "" {
			return "", "an option redfix does not pass to pip"
		}
		return opt, ""
	case "--only-binary":
		if !onlyBinaryNames(val) {
			return "", "only package names or :all: are kept of --only-binary: anything else would let pip build source distributions"
		}
		return opt + "=" + val, ""
	case "--no-binary":
		return "", "pip would build these packages from source distributions, running their build code with the network"
	case "-e", "--editable":
		return "", "editable installs are not made (the checkout's own code is imported from the checkout)"
	case "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "--no-index":
		return "", "dependencies come from the configured index"
	}
	return "", "an option redfix does not pass to pip"
}

// onlyBinaryNames reports a value of --only-binary that only narrows pip
// to wheels: package names, or :all:.
func onlyBinaryNames(val string) bool {
	if val == "" {
		return false
	}
	for _, n := range strings.Split(val, ",") {
		p := &reqParser{s: n}
		if n != ":all:" && (p.name() != n) {
			return false
		}
	}
	return true
}

// line is a logical line of a requirement file and the number of the
// line it starts on.
type line struct {
	no   int
	text string
}

// logicalLines are a requirement file's lines as pip reads them: joined
// where a line that is not a comment ends with a backslash, without
// comments, trimmed, the blank
// ones left out.
func logicalLines(text string) []line {
	var out []line
	var cur strings.Builder
	first := 0
	for i, raw := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if cur.Len() == 0 {
			first = i + 1
		}
		// A comment line never continues, as in pip.
		if strings.HasSuffix(raw, `\`) && !strings.HasPrefix(strings.TrimLeft(raw, " \t"), "#") {
			cur.WriteString(strings.TrimSuffix(raw, `\`))
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(raw)
		text := cur.String()
		cur.Reset()
		if i := commentStart(text); i >= 0 {
			text = text[:i]
		}
		if text = strings.TrimSpace(text); text != "" {
			out = append(out, line{first, text})
		}
	}
	if text := strings.TrimSpace(cur.String()); text != "" {
		out = append(out, line{first, text})
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
// why says why one is left out: anything but a plain name from the index
// (see refusal: a direct reference, a URL, a version-control URL, a local
// path, an archive), or a text that is not one requirement.
func requirement(s string) (req, why string) {
	if i := commentStart(s); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", "empty"
	case strings.ContainsAny(s, "\r\n\x00"):
		return "", "not one line"
	case strings.HasPrefix(s, "-"):
		return "", "an option, not a requirement"
	case strings.Contains(s, "${"):
		return "", whyVariable
	}
	fields := strings.Fields(s)
	// The specifier is the words up to the first option; of the options,
	// only --hash is a requirement's own.
	spec := fieldsBeforeOption(fields)
	if why := refusal(strings.Join(spec, " ")); why != "" && !untrusted.Trusting {
		// (The boundaries off, a redfix_trusting build, passes pip what
		// the repository wrote.)
		return "", why
	}
	kept := append([]string(nil), spec...)
	for i := len(spec); i < len(fields); i++ {
		h := ""
		switch f := fields[i]; {
		case strings.HasPrefix(f, "--hash="):
			h = strings.TrimPrefix(f, "--hash=")
		case f == "--hash" && i+1 < len(fields):
			h = fields[i+1]
			i++
		default:
			continue
		}
		if !hashOption.MatchString(h) {
			return "", whyBadHash
		}
		kept = append(kept, "--hash="+h)
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
