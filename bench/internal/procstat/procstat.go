// Package procstat reads what the benchmarks' load generators measure of
// the processes under test: their CPU time, named on the command line as
// name=PID.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// PIDs maps a target's name to the process that serves it; as a flag it
// takes name=PID, once per target.
type PIDs map[string]int

func (p PIDs) String() string { return fmt.Sprint(map[string]int(p)) }

// Set adds one name=PID.
func (p PIDs) Set(s string) error {
	name, v, ok := strings.Cut(s, "=")
	pid, err := strconv.Atoi(v)
	if !ok || err != nil || pid <= 0 {
		return fmt.Errorf("want name=PID, got %q", s)
	}
	p[name] = pid
	return nil
}

// CPUTime is the user plus system CPU time process pid has used so far,
// from /proc/PID/stat (clock ticks of 1/100 s, as on every Linux the
// benchmarks run on); ok is false without a pid or without /proc. The CPU
// a server spends per call does not depend on how busy the machine is, as
// latency does.
func CPUTime(pid int) (time.Duration, bool) {
	if pid == 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces; fields after it are
	// counted from its closing parenthesis: utime and stime are 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}
