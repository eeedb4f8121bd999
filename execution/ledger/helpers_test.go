package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/tools/sim"
)

const (
	tenant     = "acme"
	refundArgs = `{"order_id":"ORD-1004","amount_minor":100,"currency":"USD","account":"9182"}`
	// refusedArgs asks for more than the order's amount: the simulator
	// refuses it (Terminal).
	refusedArgs = `{"order_id":"ORD-1004","amount_minor":99999999,"currency":"USD","account":"9182"}`
)

// digestOf stands in for approvals.PayloadDigest: the ledger only needs
// some hex SHA-256 bound to the payload.
func digestOf(args string) string {
	sum := sha256.Sum256([]byte(sim.ToolIssueRefund + "\x00" + args))
	return hex.EncodeToString(sum[:])
}

// errCrash is what a simulated crash panics with: everything Execute held
// in memory is lost, only the two databases survive.
var errCrash = errors.New("simulated crash")

// spy sits between the ledger and the simulator. It records every
// idempotency key presented, counts calls, and can crash the process
// right after the provider answered (before the ledger records anything).
type spy struct {
	p tools.Provider // also a tools.Looker

	mu               sync.Mutex
	keys             []string // every key presented, in order
	executes         int
	lookups          int
	crashAfterReply  int // crash after this many successful Executes answer
	crashAfterLookup int // crash after this many lookups answer committed
}

func (s *spy) see(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, key)
}

// take consumes one armed crash.
func (s *spy) take(n *int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *n > 0 {
		*n--
		return true
	}
	return false
}

func (s *spy) Execute(ctx context.Context, t tools.Tool, call tools.Call) (tools.Result, error) {
	s.see(call.IdempotencyKey)
	s.mu.Lock()
	s.executes++
	s.mu.Unlock()
	res, err := s.p.Execute(ctx, t, call)
	if err == nil && s.take(&s.crashAfterReply) {
		panic(errCrash)
	}
	return res, err
}

func (s *spy) Lookup(ctx context.Context, t tools.Tool, key string) (tools.Result, tools.LookupStatus, error) {
	s.see(key)
	s.mu.Lock()
	s.lookups++
	s.mu.Unlock()
	res, status, err := s.p.(tools.Looker).Lookup(ctx, t, key)
	if status == tools.LookupCommitted && s.take(&s.crashAfterLookup) {
		panic(errCrash)
	}
	return res, status, err
}

func (s *spy) counts() (executes, lookups int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.executes, s.lookups
}

// otherKeys returns the keys presented that are not want.
func (s *spy) otherKeys(want string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, k := range s.keys {
		if k != want && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// fixture is a real store and a real simulator in a temporary directory.
type fixture struct {
	t    testing.TB
	ctx  context.Context
	path string // the database's URL (a file path on SQLite)
	dir  string
	db   *store.DB
	sim  *sim.Provider
	spy  *spy
	tool tools.Tool // the simulator's issue_refund
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{t: t, ctx: context.Background(), path: storetest.URL(t), dir: dir}
	var err error
	if f.db, err = store.OpenURL(f.ctx, f.path, store.Options{DataDir: dir}); err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	if f.sim, err = sim.Open(f.ctx, filepath.Join(dir, "sim.db")); err != nil {
		t.Fatalf("sim.Open: %v", err)
	}
	t.Cleanup(func() {
		f.db.Close()
		f.sim.Close()
	})
	f.spy = &spy{p: f.sim}
	for _, tl := range sim.Catalog() {
		if tl.Name == sim.ToolIssueRefund {
			f.tool = tl
		}
	}
	return f
}

// restart closes and reopens Warden's database, as a process restart does.
func (f *fixture) restart() {
	f.t.Helper()
	f.db.Close()
	db, err := store.OpenURL(f.ctx, f.path, store.Options{DataDir: f.dir})
	if err != nil {
		f.t.Fatalf("reopen store: %v", err)
	}
	f.db = db
}

func (f *fixture) call(key, args string) tools.Call {
	return tools.Call{Tool: sim.ToolIssueRefund, Args: json.RawMessage(args), IdempotencyKey: key, Tenant: tenant}
}

// intend records the effect as the approval transaction does.
func (f *fixture) intend(key, args string) error {
	return f.db.Transact(f.ctx, func(tx *store.Tx) error {
		return Intend(f.ctx, tx, Entry{Key: key, Digest: digestOf(args), Tool: sim.ToolIssueRefund, Tenant: tenant, ActionID: "act-" + key})
	})
}

func (f *fixture) mustIntend(key, args string) {
	f.t.Helper()
	if err := f.intend(key, args); err != nil {
		f.t.Fatalf("Intend(%s): %v", key, err)
	}
}

// execute runs Execute through the spy, as the job does.
func (f *fixture) execute(key, args string) (Entry, error) {
	return Execute(f.ctx, f.db, f.spy, f.tool, f.call(key, args), digestOf(args))
}

func (f *fixture) get(key string) Entry {
	f.t.Helper()
	e, err := Get(f.ctx, f.db.Read(), key)
	if err != nil {
		f.t.Fatalf("Get(%s): %v", key, err)
	}
	return e
}

func (f *fixture) effects() []sim.Effect {
	f.t.Helper()
	effs, err := f.sim.Effects(f.ctx)
	if err != nil {
		f.t.Fatalf("Effects: %v", err)
	}
	return effs
}

// resolver answers the original refund call with args, through p.
func (f *fixture) resolver(p tools.Provider, args string) Resolver {
	return func(ctx context.Context, e Entry) (Resolved, error) {
		call := f.call("", args)
		return Resolved{Tool: f.tool, Provider: p, Call: call, Digest: digestOf(args)}, nil
	}
}

// crashes runs fn and reports whether it crashed with errCrash; any other
// panic is re-raised.
func crashes(fn func()) (crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if r != errCrash {
				panic(r)
			}
			crashed = true
		}
	}()
	fn()
	return false
}

func kindOf(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrFailed):
		return "failed"
	case tools.IsTransient(err):
		return "transient"
	case errors.Is(err, ErrDigestMismatch):
		return "mismatch"
	case errors.Is(err, ErrNotIntended):
		return "not intended"
	}
	return "other: " + err.Error()
}
