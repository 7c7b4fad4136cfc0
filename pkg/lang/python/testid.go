package python

import "github.com/redfix/redfix/pkg/task"

// pytest names a test by its file (a node id: "tests/test_x.py::test_y"),
// so a failure whose package is a Python file is a test of that file, its
// id the file and the test joined by "::" (task.Failure.ID).
func init() { task.RegisterTestFileRule(Driver{}.IsSource) }
