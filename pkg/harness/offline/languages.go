package offline

import (
	"github.com/redfix/redfix/pkg/harness/offline/dialect"
	"github.com/redfix/redfix/pkg/lang"
)

// Language is the capability a language's driver implements for the
// policy: its dialect, as the repair templates read it. A driver without
// it gives the policy no file to change.
type Language interface {
	RepairDialect() *dialect.Dialect
}

// languages are the dialects of the drivers the policy was given, in the
// drivers' order: the first that owns a file is its language.
type languages []*dialect.Dialect

// languagesOf are the dialects of those drivers that have one.
func languagesOf(drivers []lang.Driver) languages {
	var ls languages
	for _, d := range drivers {
		if l, ok := d.(Language); ok {
			ls = append(ls, l.RepairDialect())
		}
	}
	return ls
}

// of is the dialect of the file at path; nil when no driver owns it.
func (ls languages) of(path string) *dialect.Dialect {
	for _, d := range ls {
		if d.Owns(path) {
			return d
		}
	}
	return nil
}

// isSource reports whether path is a file of code the templates can change:
// a language owns it, and it is not a test's, nor one the language ignores
// (a declaration file, an installed package).
func (ls languages) isSource(path string) bool { return sourceIn(ls.of(path), path) }

// sourceIn reports a file of code of the language d (nil: none) the
// templates can change.
func sourceIn(d *dialect.Dialect, path string) bool {
	return d != nil && !d.IsTest(path) && (d.Ignored == nil || !d.Ignored(path))
}

// byFile is the language of a failure whose package is pkg when the
// language names its tests by their file (the package is the test's
// file); nil otherwise.
func (ls languages) byFile(pkg string) *dialect.Dialect {
	if d := ls.of(pkg); d != nil && d.TestLine != nil {
		return d
	}
	return nil
}

// stack is the language of a failure whose package is pkg when the
// language reads frames from a failure's output; nil otherwise.
func (ls languages) stack(pkg string) *dialect.Dialect {
	if d := ls.of(pkg); d != nil && d.Stack != nil {
		return d
	}
	return nil
}

// isTestPath reports a file of tests of the language that owns it.
func (ls languages) isTestPath(path string) bool {
	d := ls.of(path)
	return d != nil && d.IsTest(path)
}

// stackLocations are the places of the frames d reads in a failure's
// output.
func stackLocations(d *dialect.Dialect, output string) []location {
	_, locs := d.Stack(output)
	out := make([]location, 0, len(locs))
	for _, l := range locs {
		out = append(out, location{path: l.Path, line: l.Line})
	}
	return out
}
