package releases

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/store"
)

func TestInCanaryIsDeterministicAndHonoursTheShare(t *testing.T) {
	for i := range 100 {
		id := fmt.Sprintf("j-%d", i)
		if first := InCanary(id, 37); InCanary(id, 37) != first {
			t.Fatalf("InCanary(%q, 37) changed between calls", id)
		}
		if InCanary(id, 0) {
			t.Errorf("InCanary(%q, 0) = true, want never", id)
		}
		if !InCanary(id, 100) {
			t.Errorf("InCanary(%q, 100) = false, want always", id)
		}
	}
	for _, share := range []int{5, 25, 50} {
		n := 0
		for i := range 10000 {
			if InCanary(fmt.Sprintf("01J%08d", i), share) {
				n++
			}
		}
		// ±2 points over 10 000 ids is over six standard deviations.
		if want := share * 100; n < want-200 || n > want+200 {
			t.Errorf("InCanary assigned %d of 10000 ids at share %d, want about %d", n, share, want)
		}
	}
	p := Pointer{Digest: "sha256:active", Candidate: "sha256:cand", Share: 100}
	if got := p.DigestFor("j-1"); got != "sha256:cand" {
		t.Errorf("DigestFor at share 100 = %s, want the candidate", got)
	}
	p.Candidate = ""
	if got := p.DigestFor("j-1"); got != "sha256:active" {
		t.Errorf("DigestFor with no canary = %s, want the active release", got)
	}
}

// canaryRig is a store with an active release and a running canary.
type canaryRig struct {
	t                 *testing.T
	ctx               context.Context
	db                *store.DB
	active, candidate string
	n                 int
}

func newCanaryRig(t *testing.T) *canaryRig {
	ctx := context.Background()
	db := openDB(t)
	r := &canaryRig{t: t, ctx: ctx, db: db}
	var err error
	if r.active, _, err = Publish(ctx, db, carol, sample, nil, ""); err != nil {
		t.Fatal(err)
	}
	if r.candidate, _, err = Publish(ctx, db, carol, withSurface("prompt", "sha256:ffff"), nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Activate(ctx, db, carol, DefaultAgent, DefaultEnv, r.active, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := exec(ctx, db, `INSERT INTO tenants (id, slug, name, created_at) VALUES ('t1', 'acme', 'Acme', ?)`,
		store.FormatTime(time.Now())); err != nil {
		t.Fatal(err)
	}
	if _, changed, err := StartCanary(ctx, db, carol, DefaultAgent, DefaultEnv, r.candidate, 10, 0, "shorter prompt"); err != nil || !changed {
		t.Fatalf("StartCanary = %v, %v", changed, err)
	}
	return r
}

// journeys records n journeys under digest with status and error code.
func (r *canaryRig) journeys(digest, status, code string, n int) []string {
	r.t.Helper()
	var ids []string
	for range n {
		r.n++
		id := fmt.Sprintf("j-%04d", r.n)
		_, err := exec(r.ctx, r.db, `INSERT INTO journeys (id, tenant_id, request_id, correlation_id, release_digest, status, error_code, created_at)
			VALUES (?, 't1', ?, ?, ?, ?, ?, ?)`, id, id, id, digest, status, code, store.FormatTime(time.Now()))
		if err != nil {
			r.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func TestEvaluateCanaryGate(t *testing.T) {
	tests := []struct {
		name                     string
		successes, failures      int
		violations, failedEffect bool
		trials, critical         int
		promote                  bool
	}{
		{name: "98 of 100 promotes", successes: 98, failures: 2, trials: 100, promote: true},
		{name: "24 of 25 holds", successes: 24, failures: 1, trials: 25},
		{name: "100 of 100 with a policy violation holds", successes: 100, violations: true, trials: 100, critical: 1},
		{name: "100 of 100 with a failed effect holds", successes: 100, failedEffect: true, trials: 100, critical: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCanaryRig(t)
			ok := r.journeys(r.candidate, "completed", "", tt.successes)
			r.journeys(r.candidate, "failed", "tool_unavailable", tt.failures)
			// Journeys of the active release and unfinished ones are not trials.
			r.journeys(r.active, "failed", "tool_not_in_scope", 5)
			r.journeys(r.candidate, "running", "", 3)
			if tt.violations {
				err := r.db.Transact(r.ctx, func(tx *store.Tx) error {
					_, err := audit.Append(r.ctx, tx, audit.Event{Actor: audit.Actor{Type: audit.ActorKey, ID: "k1"}, Tenant: "acme",
						Verb: "policy.violation", Subject: audit.Subject{Type: "journey", ID: ok[7]}})
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if tt.failedEffect {
				_, err := exec(r.ctx, r.db, `INSERT INTO actions (id, tenant_id, journey_id, tool, arguments_sealed, arguments_redacted,
					summary, impact, reversibility, policy_rule, payload_digest, idempotency_key, status, expires_at, created_at, updated_at)
					VALUES ('a1', 't1', ?, 'refund', '', '{}', 'refund', 'high', 'reversible', 'r', 'd', 'i1', 'failed', '', '', '')`, ok[3])
				if err != nil {
					t.Fatal(err)
				}
			}
			v, err := EvaluateCanary(r.ctx, r.db.Read(), DefaultAgent, DefaultEnv)
			if err != nil {
				t.Fatal(err)
			}
			if v.Trials != tt.trials || v.Successes != tt.successes || v.CriticalFailures != tt.critical || v.Promote != tt.promote {
				t.Errorf("EvaluateCanary = %d/%d, %d critical, promote %v; want %d/%d, %d critical, promote %v",
					v.Successes, v.Trials, v.CriticalFailures, v.Promote, tt.successes, tt.trials, tt.critical, tt.promote)
			}
			if len(v.Reasons) == 0 {
				t.Errorf("EvaluateCanary gave no reasons")
			}

			_, rolledBack, err := CheckCanary(r.ctx, r.db, DefaultAgent, DefaultEnv)
			if err != nil {
				t.Fatal(err)
			}
			if rolledBack != (tt.critical > 0) {
				t.Errorf("CheckCanary rolled back = %v, want %v", rolledBack, tt.critical > 0)
			}
			cur, err := Active(r.ctx, r.db.Read(), DefaultAgent, DefaultEnv)
			if err != nil {
				t.Fatal(err)
			}
			gotVerbs := verbs(t, r.db)
			if tt.critical > 0 {
				if cur.Candidate != "" || cur.Kind != KindCanaryRolledBack || cur.Digest != r.active {
					t.Errorf("after the automatic rollback the pointer is %+v, want %s with no candidate", cur, r.active)
				}
				if !slices.Contains(gotVerbs, "release.canary_rolled_back") {
					t.Errorf("audit verbs %v, want release.canary_rolled_back", gotVerbs)
				}
				if _, _, err := Promote(r.ctx, r.db, carol, DefaultAgent, DefaultEnv, r.candidate, ""); !errors.Is(err, ErrNoCanary) {
					t.Errorf("Promote after rollback = %v, want ErrNoCanary", err)
				}
				return
			}
			if cur.Candidate != r.candidate {
				t.Errorf("a hold without critical failure rolled the canary back: %+v", cur)
			}
			_, changed, err := Promote(r.ctx, r.db, carol, DefaultAgent, DefaultEnv, r.candidate, "gate clear")
			if tt.promote {
				if err != nil || !changed {
					t.Fatalf("Promote = %v, %v", changed, err)
				}
				if cur, _ := Active(r.ctx, r.db.Read(), DefaultAgent, DefaultEnv); cur.Digest != r.candidate || cur.Candidate != "" {
					t.Errorf("after Promote the pointer is %+v, want %s active", cur, r.candidate)
				}
				if !slices.Contains(verbs(t, r.db), "release.promoted") {
					t.Errorf("Promote wrote no release.promoted")
				}
			} else if !errors.Is(err, ErrCanaryHeld) {
				t.Errorf("Promote on hold = %v, want canary_held", err)
			}
		})
	}
}

func TestStopCanaryNeedsAReasonAndActsOnce(t *testing.T) {
	r := newCanaryRig(t)
	if _, _, err := StartCanary(r.ctx, r.db, carol, DefaultAgent, DefaultEnv, r.active, 10, 0, ""); !errors.Is(err, ErrSameRelease) {
		t.Errorf("StartCanary of the active release = %v, want ErrSameRelease", err)
	}
	if _, _, err := StopCanary(r.ctx, r.db, carol, DefaultAgent, DefaultEnv, r.candidate, " "); !errors.Is(err, ErrReasonRequired) {
		t.Errorf("StopCanary without a reason = %v, want ErrReasonRequired", err)
	}
	for i, want := range []bool{true, false} {
		if _, changed, err := StopCanary(r.ctx, r.db, carol, DefaultAgent, DefaultEnv, r.candidate, "too slow"); err != nil || changed != want {
			t.Errorf("StopCanary #%d = %v, %v; want %v", i+1, changed, err, want)
		}
	}
	var n int
	for _, v := range verbs(t, r.db) {
		if v == "release.canary_rolled_back" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d release.canary_rolled_back events, want 1", n)
	}
}

func exec(ctx context.Context, db *store.DB, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}
