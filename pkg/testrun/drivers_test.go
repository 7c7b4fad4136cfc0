package testrun_test

// The language drivers are loaded with the tests (pkg/lang/all registers
// them all): each registers the files its runners name tests by
// (task.RegisterTestFileRule), and the tests' ids of such tests are the
// runners' only with them.
import _ "github.com/redfix/redfix/pkg/lang/all"
