package nodetest_test

// The Node driver is loaded with the tests: the JUnit dialect it registers
// (report.RegisterJUnitDialect) names the runners' cases canonically in the
// reports the tests read.
import _ "github.com/redfix/redfix/pkg/lang/node"
