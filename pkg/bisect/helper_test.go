package bisect

import (
	"context"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/lang/golang"
)

// goLang is the Go driver, with its defaults: the histories of these tests
// are Go modules.
var goLang = golang.Driver{}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
