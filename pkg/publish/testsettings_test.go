package publish

import (
	"strings"
	"testing"
)

// TestBodyShowsTheTestSettings: the repository's test settings every run
// used are in the body's evidence, and nothing is said without any.
func TestBodyShowsTheTestSettings(t *testing.T) {
	pr := samplePR()
	pr.Task.TestSettings = "env TZ=America/New_York; args --doctest-modules"
	want := "Every run of the tests had the repository's test settings: `env TZ=America/New_York; args --doctest-modules`."
	if body := Body(pr); !strings.Contains(body, want) {
		t.Errorf("the body lacks %q:\n%s", want, body)
	}
	pr.Task.TestSettings = ""
	if body := Body(pr); strings.Contains(body, "test settings") {
		t.Errorf("a body without settings speaks of them:\n%s", body)
	}
}
