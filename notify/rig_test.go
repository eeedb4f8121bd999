package notify_test

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

var admin = audit.Actor{Type: audit.ActorPrincipal, ID: "erin"}

type rig struct {
	db       *store.DB
	sealer   *seal.Sealer
	svc      *notify.Service
	tenant   tenants.Tenant
	queue    *jobs.Queue
	cancel   context.CancelFunc
	done     chan struct{}
	keyID    string // the key proposals come from ("k1" unless set)
	keyOwner string // who created it
}

// newRig opens a database with tenant acme and a notify service allowed to
// reach loopback receivers; opts may change the service's options.
func newRig(t testing.TB, opts ...func(*notify.Options)) *rig {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	key := make([]byte, 32)
	rand.Read(key)
	sealer, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{db: db, sealer: sealer}
	if err := db.Transact(ctx, func(tx *store.Tx) (err error) {
		r.tenant, err = tenants.Insert(ctx, tx, "acme", "Acme")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	o := notify.Options{DB: db, Sealer: sealer, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		BaseURL: "https://warden.example.com", AllowInternal: true, Timeout: 2 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	r.svc = notify.New(o)
	return r
}

// start runs the job queue (the outbox on SQLite, River on PostgreSQL)
// with the delivery handler until the test ends.
func (r *rig) start(t testing.TB, workers int) {
	t.Helper()
	r.startLane(t, workers, notify.FetchCooldown)
}

// startLane is start with the notifications' lane's River fetch cooldown
// given.
func (r *rig) startLane(t testing.TB, workers int, cooldown time.Duration) {
	t.Helper()
	r.queue = jobs.New(r.db, slog.New(slog.NewTextHandler(io.Discard, nil)), workers)
	r.queue.Register(notify.JobDeliver, r.svc.HandleDeliver)
	r.queue.Lane(jobs.QueueNotify, workers, cooldown)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() {
		defer close(r.done)
		r.queue.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
}

func (r *rig) channel(t testing.TB, in notify.Input) notify.Channel {
	t.Helper()
	c, err := r.svc.SaveChannel(context.Background(), admin, "", in)
	if err != nil {
		t.Fatalf("save channel %s: %v", in.Name, err)
	}
	return c
}

func (r *rig) route(t testing.TB, rt notify.Route) {
	t.Helper()
	if _, err := notify.AddRoute(context.Background(), r.db, admin, rt, time.Now()); err != nil {
		t.Fatalf("add route: %v", err)
	}
}

// propose creates a pending refund through approvals.Create, whose
// arguments, reason and agent summary carry personal data that no message
// may contain.
func (r *rig) propose(t testing.TB, amountMinor int64) approvals.Action {
	t.Helper()
	var a approvals.Action
	err := r.db.Transact(context.Background(), func(tx *store.Tx) (err error) {
		a, err = approvals.Create(context.Background(), tx, r.sealer, approvals.Spec{
			TenantID: r.tenant.ID, TenantSlug: r.tenant.Slug, JourneyID: "j-" + store.NewID(), StepN: 1, KeyID: cmp.Or(r.keyID, "k1"),
			Tool:         approvals.Tool{Name: "refund", Impact: risk.ImpactHigh, Reversibility: risk.Compensatable, ApprovalTTL: 2 * time.Hour},
			Args:         json.RawMessage(`{"order_id":"ORD-1004","email":"jane.doe@example.com","amount_minor":240000}`),
			ArgsRedacted: json.RawMessage(`{"order_id":"ORD-1004","email":"[email]","amount_minor":240000}`),
			Summary:      "Refund $2,400.00 for ORD-1004", AgentSummary: "Refund for Jane Doe, jane.doe@example.com",
			Reason: "Jane Doe called about order ORD-1004", AmountMinor: &amountMinor, Currency: "USD",
			Rule: "refunds over $500", ApprovalsRequired: 2, KeyOwner: r.keyOwner,
		}, time.Now())
		return err
	})
	if err != nil {
		t.Fatalf("propose: %v", err)
	}
	return a
}

// pii is what the proposal carries that no message may.
var pii = []string{"jane.doe@example.com", "Jane Doe", "called about"}

// waitFor polls cond every 20 ms until it holds or 20 s pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	pollFor(t, what, 20*time.Millisecond, 20*time.Second, cond)
}

// pollFor checks cond every interval until it holds, and fails the test
// when it still does not after limit.
func pollFor(t testing.TB, what string, interval, limit time.Duration, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitSettled waits until the queue has no job due, running or waiting
// for a retry: after it, nothing more will be sent.
func (r *rig) waitSettled(t testing.TB) {
	t.Helper()
	waitFor(t, "the queue settled", func() bool {
		n, err := jobs.CountPending(context.Background(), r.db)
		if err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
}

// deliveryStatuses counts the deliveries by status.
func (r *rig) deliveryStatuses(t testing.TB) map[string]int {
	t.Helper()
	out := map[string]int{}
	rows, err := r.db.Read().Query(`SELECT status, COUNT(*) FROM notify_deliveries GROUP BY status`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		out[s] = n
	}
	return out
}

// events lists the audit events with verb, their details as JSON text.
func (r *rig) events(t testing.TB, verb string) []string {
	t.Helper()
	out, err := store.Strings(context.Background(), r.db.Read(), `SELECT details FROM audit_events WHERE verb = ? ORDER BY seq`, verb)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// receiver is a loopback HTTP receiver that records what it gets and
// answers with status (200 unless set).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []request
	status func(n int) int // the answer to the nth request (1-based)
	hang   chan struct{}   // when set, requests wait for it to close
}

type request struct {
	Path    string
	Header  http.Header
	Body    []byte
	Decoded any
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if rc.hang != nil {
			select {
			case <-rc.hang:
			case <-req.Context().Done():
				return
			}
		}
		var v any
		_ = json.Unmarshal(body, &v)
		rc.mu.Lock()
		rc.got = append(rc.got, request{Path: req.URL.Path, Header: req.Header.Clone(), Body: body, Decoded: v})
		n := len(rc.got)
		rc.mu.Unlock()
		code := http.StatusOK
		if rc.status != nil {
			code = rc.status(n)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(func() {
		if rc.hang != nil {
			select {
			case <-rc.hang:
			default:
				close(rc.hang)
			}
		}
		rc.Close()
	})
	return rc
}

// count is how many requests arrived.
func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.got...)
}

// smtpServer is a real SMTP server (go-smtp) on loopback with STARTTLS
// (or, with implicitTLS, TLS from the first byte, as on port 465) and
// AUTH PLAIN or LOGIN, recording the messages it accepts.
type smtpServer struct {
	addr     string
	port     int
	roots    *x509.CertPool
	mu       sync.Mutex
	messages []string
	rcpts    [][]string // each accepted message's RCPT TO addresses
	attempts int
	refuse   int // refuse the first refuse DATA commands with 451
	authed   []string
	mechs    []string // offered mechanisms (default PLAIN)
	tlsSeen  []bool   // whether each accepted message came over TLS
}

// smtpImplicitTLS makes the server speak TLS from the first byte.
type smtpOption func(*smtpServer, *bool)

var smtpImplicitTLS smtpOption = func(_ *smtpServer, implicit *bool) { *implicit = true }

// smtpMechs offers these AUTH mechanisms.
func smtpMechs(m ...string) smtpOption {
	return func(s *smtpServer, _ *bool) { s.mechs = m }
}

func newSMTPServer(t testing.TB, opts ...smtpOption) *smtpServer {
	t.Helper()
	cert, roots := testCert(t)
	s := &smtpServer{roots: roots, mechs: []string{sasl.Plain}}
	implicit := false
	for _, o := range opts {
		o(s, &implicit)
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &smtpSession{s: s, conn: c}, nil }))
	srv.Domain = "localhost"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if implicit {
		l = tls.NewListener(l, srv.TLSConfig)
	}
	s.addr = l.Addr().String()
	s.port = l.Addr().(*net.TCPAddr).Port
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *smtpServer) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.messages...)
}

type smtpSession struct {
	s     *smtpServer
	conn  *smtp.Conn
	user  string
	rcpts []string
}

func (ss *smtpSession) AuthMechanisms() []string { return ss.s.mechs }
func (ss *smtpSession) Auth(mech string) (sasl.Server, error) {
	check := func(username, password string) error {
		if username != "warden" || password != "s3cret-smtp-pass" {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "bad credentials"}
		}
		ss.user = username
		return nil
	}
	if mech == sasl.Login {
		return &loginServer{check: check}, nil
	}
	return sasl.NewPlainServer(func(_, username, password string) error { return check(username, password) }), nil
}

// loginServer is the server side of AUTH LOGIN (go-sasl has the client
// only): it asks for the user name, then the password.
type loginServer struct {
	step     int
	username string
	check    func(username, password string) error
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		l.step = 1
		if len(resp) == 0 {
			return []byte("Username:"), false, nil
		}
		fallthrough
	case 1:
		l.username, l.step = string(resp), 2
		return []byte("Password:"), false, nil
	}
	return nil, true, l.check(l.username, string(resp))
}

func (ss *smtpSession) Reset()        { ss.rcpts = nil }
func (ss *smtpSession) Logout() error { return nil }
func (ss *smtpSession) Mail(string, *smtp.MailOptions) error {
	if ss.user == "" {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "authentication required"}
	}
	return nil
}
func (ss *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.rcpts = append(ss.rcpts, to)
	return nil
}
func (ss *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.s.mu.Lock()
	defer ss.s.mu.Unlock()
	ss.s.attempts++
	if ss.s.attempts <= ss.s.refuse {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	ss.s.messages = append(ss.s.messages, string(b))
	ss.s.authed = append(ss.s.authed, ss.user)
	ss.s.rcpts = append(ss.s.rcpts, slices.Clone(ss.rcpts))
	_, isTLS := ss.conn.TLSConnectionState()
	ss.s.tlsSeen = append(ss.s.tlsSeen, isTLS)
	return nil
}

// testCert makes a certificate for 127.0.0.1 and localhost and a pool
// that trusts it.
func testCert(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

func contains(haystack string, needles ...string) []string {
	var found []string
	for _, n := range needles {
		if strings.Contains(haystack, n) {
			found = append(found, n)
		}
	}
	return found
}
