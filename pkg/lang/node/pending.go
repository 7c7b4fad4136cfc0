package node

import (
	"context"
	"errors"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/testrun"
)

// errPending is what the parts of the driver not written yet return.
var errPending = errors.New("node driver: not implemented yet")

func (Driver) Build(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	return testrun.Outcome{}, errPending
}
func (Driver) List(ctx context.Context, dir string, pkgs []string) ([]testrun.Listed, error) {
	return nil, errPending
}
func (Driver) Localize(ctx context.Context, dir string, ids []string, n int) (testrun.Spectra, error) {
	return testrun.Spectra{}, errPending
}
func (Driver) Check(ctx context.Context, dir string, files []string) ([]findings.Finding, error) {
	return nil, errPending
}
