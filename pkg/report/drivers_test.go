package report_test

// The language drivers are loaded with the tests (pkg/lang/all registers
// them all): the report formats they register (report.RegisterFormat) read
// the tests' reports other than JUnit XML, and the files their runners name
// tests by (task.RegisterTestFileRule) make the tests' ids the runners'.
import _ "github.com/redfix/redfix/pkg/lang/all"
