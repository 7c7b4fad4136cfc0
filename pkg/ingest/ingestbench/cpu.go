package ingestbench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A Process is one whose CPU time a run counts: this process (Pid 0: the
// bot's handler and the benchmark's client share it) or a server.
type Process struct {
	Name string
	Pid  int
}

// Usage is the CPU time (user and system) each process spent in a run:
// rates move with a shared machine's load, the work per report much less.
type Usage []time.Duration

// cpuNow reads the processes' CPU time so far.
func cpuNow(procs []Process) Usage {
	u := make(Usage, len(procs))
	for i, p := range procs {
		u[i] = cpuOf(p.Pid)
	}
	return u
}

// since is the CPU each process spent from before to now.
func (before Usage) since(procs []Process) Usage {
	now := cpuNow(procs)
	for i := range now {
		now[i] -= before[i]
	}
	return now
}

// userHZ is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const userHZ = 100

// cpuOf is pid's CPU time, this process's when pid is 0; 0 when it cannot
// be read (not Linux, the process gone).
func cpuOf(pid int) time.Duration {
	if pid == 0 {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted after its closing one (utime and stime are the 14th and
	// 15th of the line, the 12th and 13th after it).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+st) * time.Second / userHZ
}
