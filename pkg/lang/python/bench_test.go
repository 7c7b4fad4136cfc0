package python

import (
	"context"
	"testing"

	"github.com/redfix/redfix/pkg/sandbox"
)

// BenchmarkRun measures a typical Run: one failing test of calcRepo, under
// the sandbox (the dependency probe, then one pytest process), and the
// probe alone.
//
//	go test -run '^$' -bench BenchmarkRun -benchtime 20x ./pkg/lang/python/
func BenchmarkRun(b *testing.B) {
	d := Driver{}
	if _, err := d.interpreter(); err != nil {
		b.Skip(err)
	}
	ctx := context.Background()
	box, err := sandbox.New(ctx, sandbox.Config{Mode: sandbox.ModeRequired, CacheDir: b.TempDir()})
	if err != nil {
		b.Skipf("this host cannot confine: %v", err)
	}
	ctx = sandbox.With(ctx, box)
	dir := b.TempDir()
	for name, text := range calcRepo {
		writeBench(b, dir, name, text)
	}
	b.Run("one-test", func(b *testing.B) {
		for b.Loop() {
			o, err := d.Run(ctx, dir, []string{"tests/test_calc.py::test_add"}, 1)
			if err != nil || len(o.Failed) != 1 {
				b.Fatalf("%+v, %v", o, err)
			}
		}
	})
	b.Run("file", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.Run(ctx, dir, []string{"tests/test_calc.py"}, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("probe", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.prepare(ctx, dir); err != nil {
				b.Fatal(err)
			}
		}
	})
}
