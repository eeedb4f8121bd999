package execution

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// verifyCallback checks a callback the way docs/api.md tells an agent to:
// t no older than five minutes, and any v1 equal to the hex
// HMAC-SHA256 keyed by the callback secret over "<t>.<body>".
func verifyCallback(secret, header string, body []byte, now time.Time) bool {
	var ts string
	var macs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			macs = append(macs, v)
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(unix, 0)) > 5*time.Minute {
		return false
	}
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts + "."))
	h.Write(body)
	want := hex.EncodeToString(h.Sum(nil))
	for _, m := range macs {
		if hmac.Equal([]byte(m), []byte(want)) {
			return true
		}
	}
	return false
}

// agentEndpoint records the callbacks an agent receives.
type agentEndpoint struct {
	mu     sync.Mutex
	bodies [][]byte
	sigs   []string
}

func (a *agentEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.bodies = append(a.bodies, b)
	a.sigs = append(a.sigs, r.Header.Get(SignatureHeader))
}

func (a *agentEndpoint) last(t *testing.T) ([]byte, string) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.bodies) == 0 {
		t.Fatal("the agent received no callback")
	}
	return a.bodies[len(a.bodies)-1], a.sigs[len(a.sigs)-1]
}

// callbackRig is a service on a settable clock with one key and one action
// whose callback URL is a recording agent.
type callbackRig struct {
	svc     *Service
	db      *store.DB
	sealer  *seal.Sealer
	key     keys.Key
	secrets keys.Secrets
	agent   *agentEndpoint
	job     jobs.Job

	mu  sync.Mutex
	now time.Time
}

func (r *callbackRig) clock() time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.now }
func (r *callbackRig) set(t time.Time)  { r.mu.Lock(); defer r.mu.Unlock(); r.now = t }

func newCallbackRig(t *testing.T) *callbackRig {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	sealer, err := seal.New(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	r := &callbackRig{db: db, sealer: sealer, agent: &agentEndpoint{}, now: time.Now().UTC().Truncate(time.Second)}
	srv := httptest.NewServer(r.agent)
	t.Cleanup(srv.Close)
	r.svc = New(Options{DB: db, Sealer: sealer, Now: r.clock, AllowPrivateCallbacks: true,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	err = db.Transact(ctx, func(tx *store.Tx) error {
		tenant, err := tenants.Insert(ctx, tx, "acme", "Acme")
		if err != nil {
			return err
		}
		r.key, r.secrets, err = keys.Create(ctx, tx, sealer, keys.NewSpec{TenantID: tenant.ID, Name: "gift-bot", Scopes: []string{"tool:ship_gift"}, RatePerMin: 60, Burst: 5, CreatedBy: "test"})
		if err != nil {
			return err
		}
		a, err := approvals.Create(ctx, tx, sealer, approvals.Spec{
			TenantID: tenant.ID, TenantSlug: tenant.Slug, KeyID: r.key.ID,
			Tool: approvals.Tool{Name: "ship_gift", Impact: risk.ImpactHigh, Reversibility: risk.Irreversible},
			Args: json.RawMessage(`{"order_id":"ORD-1002"}`), ArgsRedacted: json.RawMessage(`{"order_id":"ORD-1002"}`),
			Summary: "Ship a gift", CallbackURL: srv.URL, External: true,
		}, r.clock())
		r.job = jobs.Job{Kind: JobCallback, Payload: json.RawMessage(`{"action_id":"` + a.ID + `"}`)}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// callback sends the action's callback now and returns what the agent got.
func (r *callbackRig) callback(t *testing.T) ([]byte, string) {
	t.Helper()
	if err := r.svc.HandleCallback(context.Background(), r.job); err != nil {
		t.Fatalf("HandleCallback: %v", err)
	}
	return r.agent.last(t)
}

func TestCallbackIsSignedWithTheCallbackSecretNotTheKeyHash(t *testing.T) {
	r := newCallbackRig(t)
	body, sig := r.callback(t)
	if !strings.HasPrefix(sig, "t="+strconv.FormatInt(r.clock().Unix(), 10)+",v1=") || strings.Count(sig, "v1=") != 1 {
		t.Fatalf("signature header = %q, want t=<now> and one v1", sig)
	}
	if !verifyCallback(r.secrets.Callback, sig, body, r.clock()) {
		t.Error("the callback does not verify with the callback secret shown at creation")
	}
	// What a copy of the database gives away must not sign.
	var stored string
	if err := r.db.Read().QueryRow(`SELECT secret_hash FROM virtual_keys WHERE id = ?`, r.key.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(r.secrets.Key))
	for name, k := range map[string]string{"the stored secret_hash": stored, "the key's SHA-256": hex.EncodeToString(sum[:]), "the key": r.secrets.Key} {
		if verifyCallback(k, sig, body, r.clock()) {
			t.Errorf("the callback verifies with %s", name)
		}
	}
	// A replayed callback is too old for the agent after five minutes.
	if verifyCallback(r.secrets.Callback, sig, body, r.clock().Add(6*time.Minute)) {
		t.Error("a six-minute-old callback verifies")
	}
}

func TestCallbackCarriesBothSignaturesDuringTheGracePeriod(t *testing.T) {
	r := newCallbackRig(t)
	ctx := context.Background()
	old := r.secrets.Callback
	_, fresh, err := keys.RotateCallbackSecret(ctx, r.db, r.sealer, r.key.ID, audit.Actor{Type: audit.ActorPrincipal, ID: "p-erin"}, r.clock())
	if err != nil {
		t.Fatal(err)
	}
	rotatedAt := r.clock()
	tests := []struct {
		after        time.Duration
		sigs         int
		newOK, oldOK bool
	}{
		{0, 2, true, true},
		{keys.CallbackGrace - time.Minute, 2, true, true},
		{keys.CallbackGrace, 1, true, false},
		{keys.CallbackGrace + time.Hour, 1, true, false},
	}
	for _, tt := range tests {
		r.set(rotatedAt.Add(tt.after))
		body, sig := r.callback(t)
		if got := strings.Count(sig, "v1="); got != tt.sigs {
			t.Errorf("%v after the rotation: %d signatures, want %d (%q)", tt.after, got, tt.sigs, sig)
		}
		if got := verifyCallback(fresh, sig, body, r.clock()); got != tt.newOK {
			t.Errorf("%v after the rotation: verifies with the new secret = %v, want %v", tt.after, got, tt.newOK)
		}
		if got := verifyCallback(old, sig, body, r.clock()); got != tt.oldOK {
			t.Errorf("%v after the rotation: verifies with the old secret = %v, want %v", tt.after, got, tt.oldOK)
		}
	}
}

// A key from before callback secrets gets no callback at all rather than
// one signed with something the database holds in the clear.
func TestCallbackForKeyWithoutSecretIsNotSent(t *testing.T) {
	r := newCallbackRig(t)
	if _, err := r.db.Read().Exec(`UPDATE virtual_keys SET callback_secret_sealed = NULL WHERE id = ?`, r.key.ID); err != nil {
		t.Fatal(err)
	}
	err := r.svc.HandleCallback(context.Background(), r.job)
	var perm *jobs.Permanent
	if !errors.As(err, &perm) || !strings.Contains(err.Error(), "no callback secret") {
		t.Errorf("HandleCallback = %v, want a permanent failure naming the missing callback secret", err)
	}
	r.agent.mu.Lock()
	defer r.agent.mu.Unlock()
	if len(r.agent.bodies) != 0 {
		t.Errorf("the agent received %d callbacks, want none", len(r.agent.bodies))
	}
}

// The worked example in docs/api.md ("Verifying a callback") is what Sign
// produces; agents test their verifiers against it.
func TestSignMatchesTheDocumentedExample(t *testing.T) {
	body := []byte(`{"id":"act_01JEXAMPLE","status":"approved","summary":"Refund $45.50 for ORD-1005","timestamp":"2025-11-30T00:00:00Z"}`)
	current, previous := "whsec_563rf68d2d7qb966u7tbmgi5wckhnqqg4cai9t9h", "whsec_3r4zfbnwjwyc7npwyuyk3germk29f74qn6v65t4r"
	at := time.Unix(1764460800, 0)
	tests := []struct {
		secrets []string
		want    string
	}{
		{[]string{current}, "t=1764460800,v1=59212d63c0ba1d7589edd5064fb5b456a214d93f7cd417c0f0783e556266f75d"},
		{[]string{current, previous}, "t=1764460800,v1=59212d63c0ba1d7589edd5064fb5b456a214d93f7cd417c0f0783e556266f75d,v1=e65f9ae774021aa47c31123f595130c2aaae052a2bc6af5e842c88da3ad81e3e"},
	}
	for _, tt := range tests {
		if got := Sign(tt.secrets, at, body); got != tt.want {
			t.Errorf("Sign(%d secrets) = %q, want %q", len(tt.secrets), got, tt.want)
		}
	}
}
