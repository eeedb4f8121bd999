package tools

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// FaultMode is how an injected fault makes a dependency misbehave.
type FaultMode string

const (
	FaultDown  FaultMode = "down"  // every call fails at once, Transient (connection refused)
	FaultHang  FaultMode = "hang"  // every call waits until its context ends
	FaultFlaky FaultMode = "flaky" // a seeded share (Rate) of calls fail, Transient
	FaultSlow  FaultMode = "slow"  // every call is delayed a seeded 0.5–1.5 × Latency, then runs
)

// Fault is one injected misbehaviour.
type Fault struct {
	Mode    FaultMode
	Rate    float64       // FaultFlaky: the share of calls that fail
	Latency time.Duration // FaultSlow: the typical delay
}

// Injector makes dependencies misbehave on purpose, for tests, drills and
// the failure matrix (docs/failure-matrix.md). It wraps providers through
// the same Provider interface the product uses, under the Guard, so the
// guard's breakers, bulkheads and retries see the faults as they would
// see a real outage. Its randomness is seeded: a run can be repeated.
// Production never builds one.
type Injector struct {
	mu     sync.Mutex
	rng    *rand.Rand
	faults map[string]Fault // by tool name; "" for every tool
}

// NewInjector returns an injector with no faults, seeded.
func NewInjector(seed uint64) *Injector {
	return &Injector{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), faults: map[string]Fault{}}
}

// Set injects f into calls of tool ("" for every tool).
func (i *Injector) Set(tool string, f Fault) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.faults[tool] = f
}

// Clear removes every fault.
func (i *Injector) Clear() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.faults = map[string]Fault{}
}

// Wrap returns p with the injector's faults in front of it; a Looker stays
// one.
func (i *Injector) Wrap(p Provider) Provider {
	w := &faulty{i: i, p: p}
	if l, ok := p.(Looker); ok {
		return &faultyLooker{faulty: w, l: l}
	}
	return w
}

// inject applies the fault for tool, if any: it returns an error for a
// call that must fail, after any delay.
func (i *Injector) inject(ctx context.Context, tool string) error {
	i.mu.Lock()
	f, ok := i.faults[tool]
	if !ok {
		f, ok = i.faults[""]
	}
	var roll float64
	if ok {
		roll = i.rng.Float64()
	}
	i.mu.Unlock()
	if !ok {
		return nil
	}
	switch f.Mode {
	case FaultDown:
		return &Error{Kind: Transient, Reason: "injected fault: " + tool + " is down (connection refused)"}
	case FaultHang:
		<-ctx.Done()
		return &Error{Kind: Transient, Reason: "injected fault: " + tool + " hangs", Err: ctx.Err()}
	case FaultFlaky:
		if roll < f.Rate {
			return &Error{Kind: Transient, Reason: "injected fault: " + tool + " failed (flaky)"}
		}
	case FaultSlow:
		d := time.Duration((0.5 + roll) * float64(f.Latency))
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return &Error{Kind: Transient, Reason: "injected fault: " + tool + " too slow", Err: ctx.Err()}
		}
	}
	return nil
}

type faulty struct {
	i *Injector
	p Provider
}

func (f *faulty) Execute(ctx context.Context, t Tool, call Call) (Result, error) {
	name, err := CallName(t, call)
	if err != nil {
		return Result{}, err
	}
	if err := f.i.inject(ctx, name); err != nil {
		return Result{}, err
	}
	return f.p.Execute(ctx, t, call)
}

// Check passes to the provider: faults are injected into the calls that
// run, not into a proposal's check.
func (f *faulty) Check(ctx context.Context, t Tool, call Call) error {
	return Check(ctx, f.p, t, call)
}

type faultyLooker struct {
	*faulty
	l Looker
}

func (f *faultyLooker) Lookup(ctx context.Context, t Tool, key string) (Result, LookupStatus, error) {
	if err := f.i.inject(ctx, t.Name); err != nil {
		return Result{}, LookupUnknown, err
	}
	return f.l.Lookup(ctx, t, key)
}
