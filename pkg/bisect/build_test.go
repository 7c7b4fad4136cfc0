package bisect

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/task"
)

func TestBuildBisectWithoutGood(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.BrokenBuildHistory(t)
	// The package appears only in commit 2: before, it is missing, which
	// counts as building.
	bis, err := BuildBisector{Lang: goLang}.Bisect(ctx, f.Dir, "", shas[8], "example.com/calc/calc")
	if err != nil {
		t.Fatal(err)
	}
	if bis.Blame != shas[5] || bis.Good != shas[4] {
		t.Errorf("bisection = %+v, want blame %s", bis, task.Short(shas[5]))
	}
	// Good after the break: nothing builds in the range.
	if _, err := (BuildBisector{Lang: goLang}).Bisect(ctx, f.Dir, shas[6], shas[8], "example.com/calc/calc"); err == nil || !strings.Contains(err.Error(), "does not build at good") {
		t.Errorf("good after the break: %v", err)
	}
}
