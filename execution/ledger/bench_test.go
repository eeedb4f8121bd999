package ledger

import (
	"strconv"
	"testing"

	"github.com/wardenhq/warden/platform/store"

	"github.com/wardenhq/warden/tools/sim"
)

// BenchmarkExecute measures one effect end to end: Intend in an approval
// transaction, then Execute (reserve transaction, the simulator's
// committing call, record transaction). "provider" is the simulator's call
// alone, for the ledger's share. The simulator's refund gets slower as
// refunds pile up on its order, so compare the two at a fixed count
// (-benchtime=3000x).
func BenchmarkExecute(b *testing.B) {
	b.Run("ledger", func(b *testing.B) {
		f := newFixture(b)
		i := 0
		for b.Loop() {
			i++
			key := "bench-" + strconv.Itoa(i)
			if err := f.db.Transact(f.ctx, func(tx *store.Tx) error {
				return Intend(f.ctx, tx, Entry{Key: key, Digest: digestOf(refundArgs), Tool: sim.ToolIssueRefund, Tenant: tenant})
			}); err != nil {
				b.Fatal(err)
			}
			if _, err := Execute(f.ctx, f.db, f.sim, f.tool, f.call(key, refundArgs), digestOf(refundArgs)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("provider", func(b *testing.B) {
		f := newFixture(b)
		i := 0
		for b.Loop() {
			i++
			if _, err := f.sim.Execute(f.ctx, f.tool, f.call("bench-"+strconv.Itoa(i), refundArgs)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkExecuteRecorded measures a repeated Execute of a recorded
// effect: the path of a retried job, answered from the ledger without
// calling the provider.
func BenchmarkExecuteRecorded(b *testing.B) {
	f := newFixture(b)
	f.mustIntend("bench", refundArgs)
	if _, err := Execute(f.ctx, f.db, f.sim, f.tool, f.call("bench", refundArgs), digestOf(refundArgs)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Execute(f.ctx, f.db, f.sim, f.tool, f.call("bench", refundArgs), digestOf(refundArgs)); err != nil {
			b.Fatal(err)
		}
	}
}
