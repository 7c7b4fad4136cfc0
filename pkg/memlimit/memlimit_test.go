package memlimit

import (
	"math"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// The tests change the process's limit: none is parallel.

func noEnv(string) string { return "" }

func TestSetAppliesTheConfiguredLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	l, restore := Set(512, noEnv)
	if got := debug.SetMemoryLimit(-1); got != 512<<20 || l.Bytes != 512<<20 || l.From != FromConfig {
		t.Errorf("Set(512) = %+v, limit in force %d; want 512 MiB from the configuration", l, got)
	}
	if l.String() != "512 MiB (configuration)" {
		t.Errorf("String = %q", l.String())
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("after restore the limit is %d, want %d as before", got, before)
	}
}

func TestSetZeroMeansNone(t *testing.T) {
	debug.SetMemoryLimit(256 << 20)
	l, restore := Set(0, noEnv)
	defer restore()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 || l.From != FromNone || l.String() != "none" {
		t.Errorf("Set(0) = %+v (%s), limit in force %d; want none", l, l, got)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != 256<<20 {
		t.Errorf("after restore the limit is %d, want 256 MiB", got)
	}
	debug.SetMemoryLimit(math.MaxInt64)
}

// The operator's GOMEMLIMIT stands: shown in a process of its own, where
// the runtime reads it at start as it does in a worker.
func TestOperatorsGOMEMLIMITWins(t *testing.T) {
	if os.Getenv("MEMLIMIT_CHILD") != "" {
		l, _ := Set(1024, os.Getenv)
		os.Stdout.WriteString(strconv.FormatInt(debug.SetMemoryLimit(-1), 10) + " " + l.From + "\n")
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOperatorsGOMEMLIMITWins$")
	cmd.Env = append(os.Environ(), "MEMLIMIT_CHILD=1", "GOMEMLIMIT=300MiB")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), strconv.Itoa(300<<20)+" "+FromEnv; got != want {
		t.Errorf("with GOMEMLIMIT=300MiB and 1024 configured, the child's limit is %q, want %q", got, want)
	}
}
