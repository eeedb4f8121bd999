package redact

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used. The build machine is
// shared, so wall-clock MB/s depends on the neighbours; benchmarks also
// report MB per CPU second ("cpu-MB/s"), which is what one core does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU runs the benchmark loop body and reports cpu-MB/s.
func reportCPU(b *testing.B, bytes int, body func()) {
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	start := cpuTime()
	n := 0
	for b.Loop() {
		body()
		n++
	}
	if d := cpuTime() - start; d > 0 {
		b.ReportMetric(float64(bytes)*float64(n)/d.Seconds()/1e6, "cpu-MB/s")
	}
}
