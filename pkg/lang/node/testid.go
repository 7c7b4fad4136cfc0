package node

import "github.com/redfix/redfix/pkg/task"

// The runners name a test by its file and its titles
// ("src/calc.test.ts::calc > adds"), so a failure whose package is a
// JavaScript or TypeScript file is a test of that file, its id the file
// and the test joined by "::" (task.Failure.ID).
func init() { task.RegisterTestFileRule(Driver{}.IsSource) }
