package notify_test

import (
	"crypto/tls"
	"io"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"

	"github.com/wardenhq/warden/notify"
)

// parseMail splits a received message into headers and decoded body.
func parseMail(t *testing.T, raw string) (mail.Header, string) {
	t.Helper()
	m, err := mail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("parse mail: %v", err)
	}
	var body io.Reader = m.Body
	if strings.EqualFold(m.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return m.Header, string(b)
}

func (r *rig) emailChannel(t *testing.T, s *smtpServer, name string) notify.Channel {
	return r.channel(t, notify.Input{Name: name, Kind: notify.Email,
		Config: notify.Config{Host: "127.0.0.1", Port: s.port, TLS: "starttls", Auth: "plain", Username: "warden",
			From: "Warden <warden@example.com>", To: []string{"approvers@example.com"}},
		Secret: notify.Secret{Password: "s3cret-smtp-pass"}})
}

// TestEmailOverSTARTTLS: a new pending action reaches the approvers'
// mailbox over STARTTLS with AUTH PLAIN, at a real SMTP server, with the
// deep link, the amount, the tenant, the expiry and the approvals needed,
// a stable message id, and none of the personal data the proposal
// carried.
func TestEmailOverSTARTTLS(t *testing.T) {
	s := newSMTPServer(t)
	r := newRig(t, func(o *notify.Options) { o.TLSConfig = &tls.Config{RootCAs: s.roots} })
	ch := r.emailChannel(t, s, "approvers-mail")
	r.route(t, notify.Route{Event: notify.EventActionPending, ChannelID: ch.ID})
	r.start(t, 2)

	a := r.propose(t, 240000)
	waitFor(t, "the message at the SMTP server", func() bool { return len(s.received()) == 1 })
	h, body := parseMail(t, s.received()[0])
	if got, want := h.Get("Subject"), "Approval needed: Refund $2,400.00 for ORD-1004"; got != want {
		t.Errorf("Subject = %q, want %q", got, want)
	}
	for _, want := range []string{"https://warden.example.com/approvals/" + a.ID, "Amount: $2,400.00", "Tenant: acme",
		"2 of 2 approvals needed", "Expires: ", "Tool: refund"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if found := contains(s.received()[0], pii...); len(found) > 0 {
		t.Errorf("the message carries personal data %q:\n%s", found, s.received()[0])
	}
	id := h.Get(notify.MessageIDHeader)
	if !strings.HasPrefix(id, "msg_") || h.Get("Message-Id") != "<"+id+"@warden>" {
		t.Errorf("message ids: X-Warden-Message-Id %q, Message-ID %q", id, h.Get("Message-Id"))
	}
	if s.authed[0] != "warden" {
		t.Errorf("signed in as %q", s.authed[0])
	}
	waitFor(t, "the delivery recorded", func() bool { return r.deliveryStatuses(t)["delivered"] == 1 })
	ev := r.events(t, "notification.delivered")
	if len(ev) != 1 || !strings.Contains(ev[0], id) || strings.Contains(ev[0], "ORD-1004") {
		t.Errorf("notification.delivered events = %q, want one naming %s without the message", ev, id)
	}
}

// TestEmailRefusedThenAccepted: a server that answers 451 to the first
// message gets it again after the queue's backoff, and holds it once.
func TestEmailRefusedThenAccepted(t *testing.T) {
	s := newSMTPServer(t)
	s.refuse = 1
	r := newRig(t, func(o *notify.Options) { o.TLSConfig = &tls.Config{RootCAs: s.roots} })
	ch := r.emailChannel(t, s, "approvers-mail")
	r.route(t, notify.Route{Event: notify.EventActionPending, ChannelID: ch.ID})
	r.start(t, 2)

	r.propose(t, 240000)
	waitFor(t, "the retried message", func() bool { return len(s.received()) == 1 })
	waitFor(t, "the delivery recorded", func() bool { return r.deliveryStatuses(t)["delivered"] == 1 })
	s.mu.Lock()
	attempts := s.attempts
	s.mu.Unlock()
	if attempts != 2 {
		t.Errorf("DATA attempts = %d, want 2 (refused once, accepted once)", attempts)
	}
	if got := len(r.events(t, "notification.delivered")); got != 1 {
		t.Errorf("notification.delivered events = %d, want 1", got)
	}
	c, err := notify.GetChannel(t.Context(), r.db.Read(), "approvers-mail")
	if err != nil {
		t.Fatal(err)
	}
	if c.Failing() || c.LastOK.IsZero() || !strings.Contains(c.LastError, "451") {
		t.Errorf("channel health = failing %v, last ok %v, last error %q; want healthy after the retry, the 451 kept as last error", c.Failing(), c.LastOK, c.LastError)
	}
	r.waitSettled(t) // nothing more will be sent
	if got := len(s.received()); got != 1 {
		t.Errorf("messages received = %d, want 1", got)
	}
}

// TestEmailWrongPassword: a refused sign-in is retried (the server may
// recover), the channel shows failing with the server's answer but not
// the password.
func TestEmailWrongPassword(t *testing.T) {
	s := newSMTPServer(t)
	r := newRig(t, func(o *notify.Options) { o.TLSConfig = &tls.Config{RootCAs: s.roots} })
	ch := r.channel(t, notify.Input{Name: "mail", Kind: notify.Email,
		Config: notify.Config{Host: "127.0.0.1", Port: s.port, TLS: "starttls", Auth: "plain", Username: "warden",
			From: "warden@example.com", To: []string{"approvers@example.com"}},
		Secret: notify.Secret{Password: "wrong-password-123"}})
	res, err := r.svc.SendTest(t.Context(), admin, ch.Name)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err == nil {
		t.Fatal("Send test with a wrong password succeeded")
	}
	c, _ := notify.GetChannel(t.Context(), r.db.Read(), "mail")
	if !c.Failing() || strings.Contains(c.LastError, "wrong-password-123") || strings.Contains(res.Err.Error(), "wrong-password-123") {
		t.Errorf("channel failing %v, last error %q, test error %q: want failing, without the password", c.Failing(), c.LastError, res.Err)
	}
	if len(s.received()) != 0 {
		t.Errorf("a message arrived without signing in")
	}
}
