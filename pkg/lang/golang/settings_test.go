package golang

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/testenv"
)

// TestSettingsReachGoTest: a test that needs TZ and a build tag passes
// only with the repository's settings, and the tagged test is listed only
// with them.
func TestSettingsReachGoTest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := writeModule(t, map[string]string{
		"zone/zone_test.go":   "package zone\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestZone(t *testing.T) {\n\tif n, _ := time.Unix(0, 0).Zone(); n != \"EST\" {\n\t\tt.Fatalf(\"zone %s\", n)\n\t}\n}\n",
		"zone/tagged_test.go": "//go:build zone\n\npackage zone\n\nimport \"testing\"\n\nfunc TestTagged(t *testing.T) {}\n",
	})
	d := Driver{}
	const id = "example.com/calc/zone.TestZone"
	if o, err := d.Run(ctx, dir, []string{id}, 1); err != nil || len(o.Failed) != 1 {
		t.Fatalf("without the settings: %s, %v; want the test failing", o.Summary(), err)
	}
	cd, err := lang.Configure(d, testenv.Settings{Env: map[string]string{"TZ": "America/New_York"}, Args: []string{"-tags=zone", "-short"}})
	if err != nil {
		t.Fatal(err)
	}
	if o, err := cd.Run(ctx, dir, []string{id}, 1); err != nil || len(o.Failed) != 0 || !slices.Contains(o.Passed, id) {
		t.Errorf("with the settings: %s, %v; want it passing\n%s", o.Summary(), err, o.Output)
	}
	listed, err := cd.List(ctx, dir, []string{"./zone"})
	if err != nil || len(listed) != 1 || !slices.Contains(listed[0].Tests, "TestTagged") {
		t.Errorf("listed with -tags=zone: %+v, %v", listed, err)
	}
	for _, arg := range []string{"-run=X", "-count=3", "-o=/tmp/x", "-exec=sh", "-json", "-coverprofile=c.out"} {
		if _, err := lang.Configure(d, testenv.Settings{Args: []string{arg}}); err == nil || !strings.Contains(err.Error(), arg) {
			t.Errorf("%s: %v; want it refused", arg, err)
		}
	}
}
