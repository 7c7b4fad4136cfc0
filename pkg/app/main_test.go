package app

import (
	"os"
	"sync"
	"testing"
)

// shared is a directory for what several tests of the package share, made
// once (sync.Once) by the first that needs it: a mined history, for one.
// It outlives that test, and is removed when the package's tests end.
var shared struct {
	once sync.Once
	dir  string
	err  error
}

func sharedDir(t *testing.T) string {
	t.Helper()
	shared.once.Do(func() { shared.dir, shared.err = os.MkdirTemp("", "redfix-app-") })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}
