package node

import (
	"testing"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
)

// BenchmarkRun measures a typical Run of one failing test under the
// sandbox (setup from the cache, then one runner process) for vitest and
// jest, and setup alone when node_modules is cached.
//
//	go test -run '^$' -bench BenchmarkRun -benchtime 5x ./pkg/lang/node/
func BenchmarkRun(b *testing.B) {
	nodetest.Require(b)
	for _, c := range []struct {
		name    string
		history []string
		test    string
	}{
		{"vitest", nodetest.Price, nodetest.PriceTest},
		{"jest", nodetest.Cart, nodetest.CartTest},
	} {
		dir, _ := nodetest.History(b, c.history...)
		ctx := nodetest.Confined(b, "o/bench")
		d := Driver{CacheDir: nodetest.CacheDir(b)}
		if err := d.Setup(ctx, dir); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/one-test", func(b *testing.B) {
			for b.Loop() {
				o, err := d.Run(ctx, dir, []string{c.test}, 1)
				if err != nil || len(o.Failed) != 1 {
					b.Fatalf("%+v, %v", o, err)
				}
			}
		})
		b.Run(c.name+"/setup-cached", func(b *testing.B) {
			for b.Loop() {
				if err := d.Setup(ctx, dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
