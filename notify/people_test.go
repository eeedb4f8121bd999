package notify_test

import (
	"crypto/tls"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
)

// TestEmailTLSAndAuth: Send test reaches a real SMTP server over
// STARTTLS and over TLS from the first byte (port 465 style), signing in
// with PLAIN and with LOGIN, each server offering only that mechanism;
// every message came over TLS.
func TestEmailTLSAndAuth(t *testing.T) {
	for _, c := range []struct {
		tls, auth string
		mech      string
		implicit  bool
	}{
		{"starttls", "plain", sasl.Plain, false},
		{"starttls", "login", sasl.Login, false},
		{"tls", "plain", sasl.Plain, true},
		{"tls", "login", sasl.Login, true},
	} {
		t.Run(c.tls+"/"+c.auth, func(t *testing.T) {
			opts := []smtpOption{smtpMechs(c.mech)}
			if c.implicit {
				opts = append(opts, smtpImplicitTLS)
			}
			s := newSMTPServer(t, opts...)
			r := newRig(t, func(o *notify.Options) { o.TLSConfig = &tls.Config{RootCAs: s.roots} })
			ch := r.channel(t, notify.Input{Name: "mail", Kind: notify.Email,
				Config: notify.Config{Host: "127.0.0.1", Port: s.port, TLS: c.tls, Auth: c.auth, Username: "warden",
					From: "warden@example.com", To: []string{"approvers@example.com"}},
				Secret: notify.Secret{Password: "s3cret-smtp-pass"}})
			res, err := r.svc.SendTest(t.Context(), admin, ch.Name)
			if err != nil || res.Err != nil {
				t.Fatalf("Send test: %v, %v", err, res.Err)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.messages) != 1 || s.authed[0] != "warden" || !s.tlsSeen[0] || !slices.Equal(s.rcpts[0], []string{"approvers@example.com"}) {
				t.Errorf("server got %d messages, signed in as %q, over TLS %v, to %v; want 1, warden, true, approvers@example.com",
					len(s.messages), s.authed, s.tlsSeen, s.rcpts)
			}
			if h, body := parseMail(t, s.messages[0]); h.Get("Subject") != "Test message from Warden" || !strings.Contains(body, "https://warden.example.com/notifications") {
				t.Errorf("test message: subject %q, body %q", h.Get("Subject"), body)
			}
		})
	}
}

// signIn records a sign-in of a person as the identity provider names
// them, and returns them as a principal of the console.
func (r *rig) signIn(t *testing.T, subject, email, name string, tenants, groups []string) identity.Principal {
	t.Helper()
	p := identity.Principal{Issuer: "https://idp.example.com", Subject: subject, Email: email, Name: name,
		Roles: []string{identity.RoleApprover}, Tenants: tenants, Groups: groups}
	err := r.db.Transact(t.Context(), func(tx *store.Tx) (err error) {
		p.ID, err = principals.Upsert(t.Context(), tx, principals.Principal{Issuer: p.Issuer, Subject: subject, Email: email, Name: name,
			Roles: p.Roles, Tenants: tenants, Groups: groups})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mailRig is a rig with an e-mail channel "mail" (its own recipient
// approvers@example.com) at a real SMTP server.
func mailRig(t *testing.T) (*rig, *smtpServer, notify.Channel) {
	s := newSMTPServer(t)
	r := newRig(t, func(o *notify.Options) { o.TLSConfig = &tls.Config{RootCAs: s.roots} })
	return r, s, r.emailChannel(t, s, "mail")
}

// rcptsOf lists the recipients of the accepted messages whose subject
// starts with prefix.
func (s *smtpServer) rcptsOf(t *testing.T, prefix string) [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]string
	for i, m := range s.messages {
		if h, _ := parseMail(t, m); strings.HasPrefix(h.Get("Subject"), prefix) {
			out = append(out, s.rcpts[i])
		}
	}
	return out
}

// TestRouteToPeople: a route naming a person by e-mail and an
// identity-provider group sends a new pending action by e-mail to that
// person and to the group's members who may see the tenant — not to a
// member scoped to another tenant, and not to the channel's own
// recipients; a route that names nobody on the same channel adds them.
// A person nobody knows, people on a webhook channel and "assignee" on
// a route of new actions are refused, and nothing is added.
func TestRouteToPeople(t *testing.T) {
	r, s, ch := mailRig(t)
	r.signIn(t, "sub-bob", "Bob@Example.com", "Bob", []string{"acme"}, nil)
	r.signIn(t, "sub-pat", "pat@example.com", "Pat", []string{"acme"}, []string{"payments", "warden-approver"})
	r.signIn(t, "sub-gus", "gus@example.com", "Gus", []string{"globex"}, []string{"payments"})
	r.signIn(t, "sub-ann", "ann@example.com", "Ann", []string{"*"}, []string{"payments-eu"})
	r.route(t, notify.Route{Event: notify.EventActionPending, ChannelID: ch.ID, TenantID: r.tenant.ID,
		Recipients: []string{"bob@example.com", "group:payments"}})
	r.start(t, 2)

	r.propose(t, 240000)
	waitFor(t, "the e-mail to the people named", func() bool { return len(s.received()) == 1 })
	if got, want := s.rcpts[0], []string{"Bob@Example.com", "pat@example.com"}; !slices.Equal(got, want) {
		t.Errorf("RCPT TO %v, want %v (not gus, of another tenant, nor ann, of another group, nor the channel's own)", got, want)
	}

	// A route of the same event naming nobody: the channel's own
	// recipients too, in the same one message.
	r.route(t, notify.Route{Event: notify.EventActionPending, ChannelID: ch.ID})
	r.propose(t, 240000)
	waitFor(t, "the second e-mail", func() bool { return len(s.received()) == 2 })
	if got, want := s.rcptsOf(t, "Approval needed")[1], []string{"approvers@example.com", "Bob@Example.com", "pat@example.com"}; !slices.Equal(got, want) {
		t.Errorf("RCPT TO %v, want %v", got, want)
	}

	hook := r.channel(t, notify.Input{Name: "hook", Kind: notify.Webhook, Secret: notify.Secret{URL: "http://127.0.0.1:9/hook", SigningSecret: signingSecret}})
	before, _ := notify.Routes(t.Context(), r.db.Read())
	for _, c := range []struct {
		name string
		rt   notify.Route
	}{
		{"unknown person", notify.Route{Event: notify.EventActionPending, ChannelID: ch.ID, Recipients: []string{"nobody@example.com"}}},
		{"people on a webhook", notify.Route{Event: notify.EventActionPending, ChannelID: hook.ID, Recipients: []string{"group:payments"}}},
		{"assignee of new actions", notify.Route{Event: notify.EventActionPending, ChannelID: ch.ID, Recipients: []string{notify.RecipientAssignee}}},
		{"owner of alerts", notify.Route{Event: notify.EventAlert, ChannelID: ch.ID, Recipients: []string{notify.RecipientOwner}}},
		{"empty group", notify.Route{Event: notify.EventActionPending, ChannelID: ch.ID, Recipients: []string{"group:"}}},
	} {
		_, err := notify.AddRoute(t.Context(), r.db, admin, c.rt, time.Now())
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Fields["recipients"] == "" {
			t.Errorf("%s: err %v, want a message on recipients", c.name, err)
		}
	}
	if after, _ := notify.Routes(t.Context(), r.db.Read()); len(after) != len(before) {
		t.Errorf("refused routes were added: %d routes, want %d", len(after), len(before))
	}
	for _, ev := range r.events(t, "notify.route_added") {
		if strings.Contains(strings.ToLower(ev), "bob@example.com") {
			t.Errorf("the audit trail names a recipient: %s", ev)
		}
	}
}

// TestAssigneeAndOwner: a route of "action taken" naming the assignee
// e-mails the approver who took the action and, on a take-over, the one
// it was taken from; an escalation route naming the owner e-mails the
// admin who created the proposing agent's key when the action expires
// undecided.
func TestAssigneeAndOwner(t *testing.T) {
	r, s, ch := mailRig(t)
	bobP := r.signIn(t, "sub-bob", "bob@example.com", "Bob Approver", []string{"acme"}, nil)
	aliceP := r.signIn(t, "sub-alice", "alice@example.com", "Alice Approver", []string{"acme"}, nil)
	erin := r.signIn(t, "sub-erin", "erin@example.com", "Erin Admin", []string{"*"}, nil)
	err := r.db.Transact(t.Context(), func(tx *store.Tx) error {
		k, _, err := keys.Create(t.Context(), tx, r.sealer, keys.NewSpec{TenantID: r.tenant.ID, Name: "refund agent", Scopes: []string{"tool:refund"},
			RatePerMin: 60, Burst: 10, CreatedBy: erin.ID})
		r.keyID, r.keyOwner = k.ID, approvals.KeyOwner(k.CreatedBy)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r.route(t, notify.Route{Event: notify.EventAssigned, ChannelID: ch.ID, Recipients: []string{notify.RecipientAssignee}})
	r.route(t, notify.Route{Event: notify.EventEscalation, ChannelID: ch.ID, TenantID: r.tenant.ID, Recipients: []string{notify.RecipientOwner}})

	a := r.propose(t, 240000)
	now := a.CreatedAt.Add(time.Minute)
	if _, err := approvals.Take(t.Context(), r.db, bobP, a.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, err := approvals.Take(t.Context(), r.db, aliceP, a.ID, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	b := r.propose(t, 240000)
	if ok, err := approvals.ExpireDue(t.Context(), r.db, b.ID, nil, b.ExpiresAt.Add(time.Second)); err != nil || !ok {
		t.Fatalf("expire due: %v %v", ok, err)
	}
	r.start(t, 2)
	waitFor(t, "three e-mails", func() bool { return len(s.received()) == 3 })
	if got := s.rcptsOf(t, "Bob Approver is reviewing"); len(got) != 1 || !slices.Equal(got[0], []string{"bob@example.com"}) {
		t.Errorf("Bob's Take went to %v, want bob@example.com", got)
	}
	if got := s.rcptsOf(t, "Alice Approver is reviewing"); len(got) != 1 || !slices.Equal(got[0], []string{"alice@example.com", "bob@example.com"}) {
		t.Errorf("Alice's take-over went to %v, want alice and bob", got)
	}
	if got := s.rcptsOf(t, "Expired undecided"); len(got) != 1 || !slices.Equal(got[0], []string{"erin@example.com"}) {
		t.Errorf("the expiry went to %v, want the key's owner erin@example.com", got)
	}
	for _, m := range s.received() {
		if found := contains(m, pii...); len(found) > 0 {
			t.Errorf("a message carries personal data %q", found)
		}
	}
}
