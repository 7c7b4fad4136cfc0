package node

import (
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
)

func TestRunVitest(t *testing.T) {
	ctx, d, dir := fixture(t, nodetest.Price...)
	o, err := d.Run(ctx, dir, []string{nodetest.PriceTest, nodetest.PricePassing}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Failed) != 1 || o.Failed[0].ID() != nodetest.PriceTest {
		t.Fatalf("failed = %+v (%s)\n%s", o.Failed, o.Summary(), o.Output)
	}
	f := o.Failed[0]
	if f.Message != nodetest.PriceFailure {
		t.Errorf("message = %q, want %q", f.Message, nodetest.PriceFailure)
	}
	if len(f.Frames) == 0 || f.Frames[0] != nodetest.PriceFrame {
		t.Errorf("frames = %v, want %s first", f.Frames, nodetest.PriceFrame)
	}
	if strings.Contains(f.Output, dir) {
		t.Errorf("the checkout's path leaks into the failure:\n%s", f.Output)
	}
	if !slices.Equal(o.Passed, []string{nodetest.PricePassing}) {
		t.Errorf("passed = %v", o.Passed)
	}
	if r := o.Runs[nodetest.PriceTest]; r.Fail != 2 || r.Pass != 0 {
		t.Errorf("runs of the failing test = %+v, want 2 failures", r)
	}
	clean(t, dir)
	if o.Invocations != 2 || len(o.Others) != 0 || len(o.Missing) != 0 || len(o.Build) != 0 {
		t.Errorf("invocations %d, others %v, missing %v, build %v", o.Invocations, o.Others, o.Missing, o.Build)
	}
}

func TestRunJest(t *testing.T) {
	ctx, d, dir := fixture(t, nodetest.Cart...)
	o, err := d.Run(ctx, dir, []string{nodetest.CartTest, "src/cart.test.js::cart > no such test"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Failed) != 1 || o.Failed[0].ID() != nodetest.CartTest {
		t.Fatalf("failed = %+v (%s)\n%s", o.Failed, o.Summary(), o.Output)
	}
	f := o.Failed[0]
	if f.Message != nodetest.CartFailure {
		t.Errorf("message = %q, want %q", f.Message, nodetest.CartFailure)
	}
	if len(f.Frames) == 0 || f.Frames[0] != nodetest.CartFrame {
		t.Errorf("frames = %v, want %s first", f.Frames, nodetest.CartFrame)
	}
	if !slices.Equal(o.Missing, []string{"src/cart.test.js::cart > no such test"}) {
		t.Errorf("missing = %v", o.Missing)
	}
	if len(o.Passed) != 0 {
		t.Errorf("passed = %v, want only the asked tests", o.Passed)
	}
	clean(t, dir)
}
