package triage

import (
	"path"
	"slices"
	"strings"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/untrusted"
)

// FrameDirs is a language whose test output names files bare, as its
// package's directory holds them (go test prints "x_test.go:12"): FrameDir
// is the directory of the package pkg (as its reports name it), relative
// to the checkout's root at dir, "." when it cannot tell.
type FrameDirs interface {
	FrameDir(dir, pkg string) string
}

// relativeFailures rewrites the failures a CI report gave so that their
// paths are relative to the repository root, as the reproduction's are: the
// CI machine's checkout path is learnt from the frames both name (CI's
// "/ci/src/pkg/x.go:12" and the reproduction's "pkg/x.go:12"), and the bare
// file names a language's runner prints gain their package's directory
// (see FrameDirs).
func relativeFailures(l bisect.Language, dir string, ci []task.Failure, rep Reproduction) []task.Failure {
	var known []string
	for _, e := range rep.Tests {
		if e.Failure != nil {
			known = append(known, e.Failure.Frames...)
		}
	}
	roots := map[string]bool{}
	for _, f := range ci {
		for _, c := range f.Frames {
			for _, k := range known {
				if strings.Contains(k, "/") && strings.HasSuffix(c, "/"+k) {
					roots[strings.TrimSuffix(c, k)] = true
				}
			}
		}
	}
	var rootList []string
	for r := range roots {
		rootList = append(rootList, r)
	}
	fd, _ := l.(FrameDirs)
	out := make([]task.Failure, len(ci))
	for i, f := range ci {
		f.Frames = append([]string(nil), f.Frames...)
		pkgDir := "."
		if fd != nil {
			pkgDir = fd.FrameDir(dir, f.Package)
		}
		root := ""
		if len(rootList) > 0 {
			root = rootList[0]
		}
		report.Relativize(&f, pkgDir, root, rootList...)
		out[i] = f
	}
	return out
}

// canonicalFailures names the failures whose tests the language l names
// by file as it does: pytest's JUnit dialect
// ("tests.test_x", "test_y") becomes the node id's file and test
// ("tests/test_x.py", "test_y"), so that the task names
// "tests/test_x.py::test_y". Go's import paths are left as they are.
func canonicalFailures(l bisect.Language, dir string, fs []task.Failure) []task.Failure {
	if l == nil {
		return fs
	}
	out := make([]task.Failure, len(fs))
	for i, f := range fs {
		out[i] = f
		if f.Test == "" {
			continue
		}
		t, err := l.Resolve(dir, f.ID())
		if err != nil || t.IsPackage() || !task.IsTestFilePath(t.ImportPath) || t.ID == f.ID() {
			continue
		}
		out[i].Package, out[i].Test = t.ImportPath, t.Test
	}
	return out
}

// uncollectedFiles makes the failures that stand for a test file that did
// not collect (an import that fails) build failures of that file, as the
// language l names it: pytest's JUnit names such a file by its module
// alone ("tests.test_x"), an error with no classname (the suite's name
// stands for its package), which names no test. The others are left as
// they are, and all are with a nil l.
func uncollectedFiles(l bisect.Language, dir string, fs []task.Failure) []task.Failure {
	if l == nil {
		return fs
	}
	out := make([]task.Failure, len(fs))
	for i, f := range fs {
		out[i] = f
		if f.Kind != "error" || f.Test == "" {
			continue
		}
		if _, err := l.Resolve(dir, f.ID()); err == nil {
			continue
		}
		if t, err := l.Resolve(dir, f.Test); err == nil && t.IsPackage() && task.IsTestFilePath(t.ImportPath) {
			out[i].Package, out[i].Test = t.ImportPath, ""
		}
	}
	return out
}

// checkoutFiles names by their path in the checkout at dir the test files
// that failures name by CI's absolute path (node:test's JUnit names a file
// that failed to run so, and shows no root to make it relative by): the
// longest ending of the path that is a regular file of the checkout, read
// without following a link. The others are left as they are.
func checkoutFiles(dir string, fs []task.Failure) []task.Failure {
	out := slices.Clone(fs)
	for i, f := range out {
		p := f.Package
		if !path.IsAbs(p) || !task.IsTestFilePath(p) {
			continue
		}
		for j := 1; j < len(p); j++ {
			if p[j-1] != '/' {
				continue
			}
			if fi, err := untrusted.Lstat(dir, p[j:]); err == nil && fi.Mode().IsRegular() {
				out[i].Package = p[j:]
				break
			}
		}
	}
	return out
}
