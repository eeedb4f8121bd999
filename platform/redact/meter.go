package redact

import "sync/atomic"

// workMeter counts the redactor's work in units that each cost about the
// same — a byte a pass reads, a match a merge moves, a word the model is
// shown — so that a test can check that the work grows linearly with the
// text without timing anything. It counts only while on, which only tests
// switch; off, counting is one atomic load per call of the places it
// counts, none of them per byte.
type workMeter struct {
	on atomic.Bool
	n  atomic.Int64
}

var meter workMeter

func (m *workMeter) add(n int) {
	if m.on.Load() {
		m.n.Add(int64(n))
	}
}
