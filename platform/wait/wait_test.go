package wait

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	start := time.Now()
	if !For(5*time.Second, func() bool { return n.Add(1) >= 3 }) {
		t.Fatal("For gave up on a condition that came to hold")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("For took %v for a condition that held on the third check", took)
	}
}

func TestForGivesUpAtTheDeadline(t *testing.T) {
	start := time.Now()
	if For(50*time.Millisecond, func() bool { return false }) {
		t.Fatal("For reported a condition that never held")
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("For gave up after %v, before its deadline", took)
	}
}
