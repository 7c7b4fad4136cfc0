package offline

import (
	"testing"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/all"
)

// The tests' languages: those of every registered driver, as the wiring
// gives them to the policy.

func testDrivers() []lang.Driver { return all.Drivers(config.Languages{}, 0, nil) }

var testLangs = languagesOf(testDrivers())

// mutationsIn applies the templates to one line of the file at path, as
// the policy does.
func mutationsIn(path, line string) []Mutation { return New(nil, testDrivers()).Mutations(path, line) }

// Every registered driver gives the policy its dialect, and the dialect
// owns the files of its language alone: the templates reach a language
// only through its driver.
func TestEveryDriverHasADialect(t *testing.T) {
	for _, d := range testDrivers() {
		l, ok := d.(Language)
		if !ok {
			t.Errorf("driver %s has no RepairDialect: the offline policy would change none of its files", d.Name())
			continue
		}
		if n := l.RepairDialect().Name; n != d.Name() {
			t.Errorf("driver %s: its dialect is named %q", d.Name(), n)
		}
	}
	for _, p := range []string{"a/b.go", "shop/pricing.py", "src/price.ts"} {
		if testLangs.of(p) == nil {
			t.Errorf("no dialect owns %s", p)
		}
	}
}

// The policy knows the languages of the drivers it is given and no
// other: a Go line gets templates from a policy given the Go driver, a
// Python line none, and a policy given no driver changes nothing.
func TestMutationsComeFromTheDrivers(t *testing.T) {
	var goOnly []lang.Driver
	for _, d := range testDrivers() {
		if d.Name() == "go" {
			goOnly = append(goOnly, d)
		}
	}
	p := New(nil, goOnly)
	if len(p.Mutations("calc/calc.go", "\tif i <= n {")) == 0 {
		t.Error("no templates for a line of the Go driver's language")
	}
	if got := p.Mutations("shop/x.py", "    if qty > t.min_qty:"); got != nil {
		t.Errorf("templates for a file no given driver owns: %v", got)
	}
	if got := New(nil, nil).Mutations("calc/calc.go", "\tif i <= n {"); got != nil {
		t.Errorf("templates without drivers: %v", got)
	}
}
