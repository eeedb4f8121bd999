package sim

import (
	"context"
	"time"

	"github.com/wardenhq/warden/tools"
)

// Faults makes the simulator misbehave the way a remote system does, so
// that retries, timeouts and crash recovery can be tested. Test-only: a
// production configuration never sets them.
type Faults struct {
	// Delay holds every Execute this long before it does anything; a
	// context done meanwhile ends the call Transient, with no effect.
	Delay time.Duration
	// FailNext makes the next N Execute calls fail Transient before they
	// touch anything.
	FailNext int
	// LoseNext makes the next N calls that commit a new effect answer
	// Transient after the commit, as if the reply were lost on the wire.
	// Asking again with the same key returns the committed receipt.
	LoseNext int
	// AfterCommit, when set, is called right after a new effect is
	// durably committed and before Execute returns: the place for a crash
	// test to kill the process between the provider's commit and Warden's
	// record of it. It is called outside every lock of the Provider.
	AfterCommit func(tool, idempotencyKey string)
}

// SetFaults replaces the faults in force; Faults{} switches them off.
// Test-only.
func (p *Provider) SetFaults(f Faults) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = f
}

// injectFault applies Delay and FailNext at the start of Execute.
func (p *Provider) injectFault(ctx context.Context) error {
	p.mu.Lock()
	delay := p.faults.Delay
	fail := p.faults.FailNext > 0
	if fail {
		p.faults.FailNext--
	}
	p.mu.Unlock()

	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return &tools.Error{Kind: tools.Transient, Reason: "simulated payments system too slow", Err: ctx.Err()}
		}
	}
	if fail {
		return &tools.Error{Kind: tools.Transient, Reason: "simulated payments system unavailable (injected fault)"}
	}
	return nil
}

// afterCommit runs AfterCommit and applies LoseNext once a new effect is
// committed.
func (p *Provider) afterCommit(tool, key string) error {
	p.mu.Lock()
	hook := p.faults.AfterCommit
	lose := p.faults.LoseNext > 0
	if lose {
		p.faults.LoseNext--
	}
	p.mu.Unlock()

	if hook != nil {
		hook(tool, key)
	}
	if lose {
		return &tools.Error{Kind: tools.Transient, Reason: "reply lost after commit (injected fault)"}
	}
	return nil
}
