package ingest_test

// The language drivers are loaded with the tests (pkg/lang/all registers
// them all): the report formats they register (report.RegisterFormat) are
// what reads the tests' reports other than JUnit XML.
import _ "github.com/redfix/redfix/pkg/lang/all"
