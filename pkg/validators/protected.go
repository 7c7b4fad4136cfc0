package validators

import (
	"fmt"

	"github.com/redfix/redfix/pkg/protected"
	"github.com/redfix/redfix/pkg/unidiff"
)

// Protected files are those a repair has no business editing (see
// pkg/protected): the candidate's driver's kinds first (ProtectedFiles),
// then those of the other languages the configuration knows
// (Config.Protected), then the kinds every repository has.

// ProtectedFilesOf are the protected files of the drivers that declare
// some (ProtectedFiles), in order: Config.Protected for the languages a
// configuration knows.
func ProtectedFilesOf[L any](drivers []L) []protected.Kind {
	var kinds []protected.Kind
	for _, d := range drivers {
		if p, ok := any(d).(ProtectedFiles); ok {
			kinds = append(kinds, p.ProtectedFiles()...)
		}
	}
	return kinds
}

// protectedKinds are the kinds the candidate is held to, in order.
func (v *Validators) protectedKinds(c *candidate) []protected.Kind {
	var kinds []protected.Kind
	if p, ok := c.driver().(ProtectedFiles); ok {
		kinds = append(kinds, p.ProtectedFiles()...)
	}
	kinds = append(kinds, v.cfg.Protected...)
	return append(kinds, protected.Common...)
}

// classifyProtected returns what protects p, if anything.
func (v *Validators) classifyProtected(c *candidate, p string) (protected.Path, bool) {
	return protected.Classify(v.protectedKinds(c), p, c.isSource)
}

// protectedViolations are the evidence against f's edits of protected
// files that the policy does not name.
func (v *Validators) protectedViolations(c *candidate, f unidiff.File) []string {
	var bad []string
	for _, p := range f.Paths() {
		pp, ok := v.classifyProtected(c, p)
		if !ok || pp.NamedBy(v.cfg.AllowedPaths, p) {
			continue
		}
		if pp.Kind.Read != nil {
			bad = append(bad, pp.Kind.Read(c.in.Dir, p, f)...)
			continue
		}
		bad = append(bad, fmt.Sprintf("%s: %s %s (%s; %s)", p, f.Verb(), pp.Kind.What, pp.Kind.Why, protected.NotAllowed))
	}
	return bad
}
