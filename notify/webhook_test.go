package notify_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/sign"
	"github.com/wardenhq/warden/platform/store"
)

const signingSecret = "whsec_notifytestsecret0123456789"

// get walks a decoded JSON value by keys and indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

type receivers struct {
	slack, teams, generic, pagerduty *receiver
}

// webhookRig has a channel of each webhook kind: the first three hear new
// pending actions, generic and PagerDuty hear alerts.
func webhookRig(t *testing.T, opts ...func(*notify.Options)) (*rig, receivers) {
	r := newRig(t, opts...)
	rc := receivers{slack: newReceiver(t), teams: newReceiver(t), generic: newReceiver(t), pagerduty: newReceiver(t)}
	rc.pagerduty.status = func(int) int { return http.StatusAccepted }
	slack := r.channel(t, notify.Input{Name: "slack", Kind: notify.Slack, Secret: notify.Secret{URL: rc.slack.URL + "/services/T0/B0/slacksecretpath"}})
	teams := r.channel(t, notify.Input{Name: "teams", Kind: notify.Teams, Secret: notify.Secret{URL: rc.teams.URL + "/workflows/teamssecretpath"}})
	generic := r.channel(t, notify.Input{Name: "generic", Kind: notify.Webhook, Secret: notify.Secret{URL: rc.generic.URL + "/hook", SigningSecret: signingSecret}})
	pd := r.channel(t, notify.Input{Name: "pagerduty", Kind: notify.PagerDuty, Secret: notify.Secret{URL: rc.pagerduty.URL + "/v2/enqueue", RoutingKey: "R0UTINGKEY"}})
	for _, c := range []notify.Channel{slack, teams, generic} {
		r.route(t, notify.Route{Event: notify.EventActionPending, ChannelID: c.ID})
	}
	for _, c := range []notify.Channel{generic, pd} {
		r.route(t, notify.Route{Event: notify.EventAlert, ChannelID: c.ID})
	}
	return r, rc
}

// alert fires (or resolves, at resolved) the failure-rate alert of skill
// refunds, as the alerts package does in its transaction.
func (r *rig) alert(t *testing.T, id string, fired time.Time, resolved *time.Time) {
	t.Helper()
	err := r.db.Transact(context.Background(), func(tx *store.Tx) error {
		return notify.AlertChanged(context.Background(), tx, notify.AlertInfo{ID: id, Kind: "failure_rate", Subject: "refunds",
			Severity: "critical", What: "Failure rate of skill refunds", Value: "45% (threshold 20%)", Runbook: "/runbooks/tool-provider-outage",
			FiredAt: fired, Resolved: resolved})
	})
	if err != nil {
		t.Fatalf("alert: %v", err)
	}
}

func (r *rig) setQuiet(t *testing.T, d time.Duration) {
	t.Helper()
	if err := r.db.Transact(context.Background(), func(tx *store.Tx) error { return notify.SetQuietTime(context.Background(), tx, admin, d) }); err != nil {
		t.Fatal(err)
	}
}

// TestWebhookShapes: each receiver gets its product's payload with the
// deep link, the message id and no personal data; the generic webhook's
// signature verifies as docs/api.md tells receivers; PagerDuty gets a
// trigger and then a resolve with the same dedup key.
func TestWebhookShapes(t *testing.T) {
	r, rc := webhookRig(t)
	r.setQuiet(t, 0)
	r.start(t, 2)
	a := r.propose(t, 240000)
	link := "https://warden.example.com/approvals/" + a.ID
	for name, rcv := range map[string]*receiver{"slack": rc.slack, "teams": rc.teams, "generic": rc.generic} {
		waitFor(t, name+" message", func() bool { return len(rcv.requests()) == 1 })
		req := rcv.requests()[0]
		if found := contains(string(req.Body), pii...); len(found) > 0 {
			t.Errorf("%s: the message carries personal data %q: %s", name, found, req.Body)
		}
		if !strings.Contains(string(req.Body), link) || !strings.Contains(string(req.Body), "2 of 2 approvals needed") {
			t.Errorf("%s: the message lacks the link or the approvals needed: %s", name, req.Body)
		}
		if id := req.Header.Get(notify.MessageIDHeader); !strings.HasPrefix(id, "msg_") || !strings.Contains(string(req.Body), id) {
			t.Errorf("%s: message id header %q not in the body", name, id)
		}
	}
	s := rc.slack.requests()[0].Decoded
	if get(s, "text") != "Approval needed: Refund $2,400.00 for ORD-1004" || get(s, "blocks", 0, "type") != "header" {
		t.Errorf("slack payload: text %v, first block %v", get(s, "text"), get(s, "blocks", 0))
	}
	foundButton := false
	for i := range 6 {
		if get(s, "blocks", i, "type") == "actions" && get(s, "blocks", i, "elements", 0, "url") == link {
			foundButton = true
		}
	}
	if !foundButton {
		t.Errorf("slack payload has no button to %s: %s", link, rc.slack.requests()[0].Body)
	}
	tm := rc.teams.requests()[0].Decoded
	if get(tm, "type") != "message" || get(tm, "attachments", 0, "contentType") != "application/vnd.microsoft.card.adaptive" ||
		get(tm, "attachments", 0, "content", "type") != "AdaptiveCard" || get(tm, "attachments", 0, "content", "actions", 0, "url") != link {
		t.Errorf("teams payload: %s", rc.teams.requests()[0].Body)
	}
	g := rc.generic.requests()[0]
	if !sign.Verify(signingSecret, g.Header.Get(sign.Header), g.Body, time.Now()) {
		t.Errorf("generic webhook signature %q does not verify", g.Header.Get(sign.Header))
	}
	if sign.Verify("whsec_someoneelsessecret000000", g.Header.Get(sign.Header), g.Body, time.Now()) {
		t.Error("the signature verifies with another secret")
	}
	if get(g.Decoded, "event") != notify.EventActionPending || get(g.Decoded, "url") != link || get(g.Decoded, "tenant") != "acme" {
		t.Errorf("generic payload: %s", g.Body)
	}

	fired := time.Now().UTC()
	r.alert(t, "al1", fired, nil)
	waitFor(t, "the PagerDuty trigger", func() bool { return len(rc.pagerduty.requests()) == 1 })
	pd := rc.pagerduty.requests()[0].Decoded
	if get(pd, "event_action") != "trigger" || get(pd, "dedup_key") != "warden/failure_rate/refunds" || get(pd, "routing_key") != "R0UTINGKEY" ||
		get(pd, "payload", "severity") != "critical" || get(pd, "payload", "source") != "warden" ||
		get(pd, "links", 1, "href") != "https://warden.example.com/runbooks/tool-provider-outage" {
		t.Errorf("PagerDuty trigger: %s", rc.pagerduty.requests()[0].Body)
	}
	resolved := time.Now().UTC()
	r.alert(t, "al1", fired, &resolved)
	waitFor(t, "the PagerDuty resolve", func() bool { return len(rc.pagerduty.requests()) == 2 })
	pd = rc.pagerduty.requests()[1].Decoded
	if get(pd, "event_action") != "resolve" || get(pd, "dedup_key") != "warden/failure_rate/refunds" {
		t.Errorf("PagerDuty resolve: %s", rc.pagerduty.requests()[1].Body)
	}
	waitFor(t, "the generic webhook's firing and resolved", func() bool { return len(rc.generic.requests()) == 3 })
	if got := get(rc.generic.requests()[2].Decoded, "alert", "status"); got != "resolved" {
		t.Errorf("generic webhook's third message is %v, want the resolution", got)
	}
}

// TestOutageDelaysNothingElse: whichever receiver hangs, the others get
// their messages, and the hung channel shows failing.
func TestOutageDelaysNothingElse(t *testing.T) {
	for _, down := range []string{"slack", "teams", "generic"} {
		t.Run(down, func(t *testing.T) {
			r, rc := webhookRig(t, func(o *notify.Options) { o.Timeout = time.Second })
			all := map[string]*receiver{"slack": rc.slack, "teams": rc.teams, "generic": rc.generic}
			all[down].hang = make(chan struct{})
			r.start(t, 2)
			for range 3 {
				r.propose(t, 240000)
			}
			for name, rcv := range all {
				if name == down {
					continue
				}
				waitFor(t, name+"'s three messages", func() bool { return len(rcv.requests()) == 3 })
			}
			waitFor(t, down+" shown failing", func() bool {
				c, err := notify.GetChannel(t.Context(), r.db.Read(), down)
				return err == nil && c.Failing() && strings.Contains(c.LastError, "no answer within")
			})
			if got := len(all[down].requests()); got != 0 {
				t.Errorf("the hung receiver answered %d requests", got)
			}
		})
	}
}

// TestFlappingAlertPagesOnce: an alert that resolves and fires again
// within the quiet time pages once and is not resolved in between; once
// it stays resolved for the quiet time, the page is resolved.
func TestFlappingAlertPagesOnce(t *testing.T) {
	r, rc := webhookRig(t)
	r.setQuiet(t, 2*time.Second)
	r.start(t, 2)
	t0 := time.Now().UTC()
	r.alert(t, "al1", t0, nil)
	waitFor(t, "the trigger", func() bool { return len(rc.pagerduty.requests()) == 1 })
	r1 := t0.Add(time.Second)
	r.alert(t, "al1", t0, &r1)
	r.alert(t, "al2", time.Now().UTC(), nil) // fires again within the quiet time
	waitFor(t, "the overtaken resolution skipped", func() bool { return r.deliveryStatuses(t)["skipped"] >= 2 })
	if got := len(rc.pagerduty.requests()); got != 1 {
		t.Fatalf("PagerDuty got %d events, want the one trigger", got)
	}
	r2 := time.Now().UTC()
	r.alert(t, "al2", t0, &r2)
	waitFor(t, "the resolution after the quiet time", func() bool { return len(rc.pagerduty.requests()) == 2 })
	if got := get(rc.pagerduty.requests()[1].Decoded, "event_action"); got != "resolve" {
		t.Errorf("second PagerDuty event = %v, want resolve", got)
	}
	if since := time.Since(r2); since < 2*time.Second {
		t.Errorf("resolved %v after the alert resolved, want after the quiet time", since)
	}
}

// TestGiveUp: a receiver that refuses the message fails the delivery at
// once; a receiver that keeps failing for a day gets it given up; both
// are audited without the message, listed with the failed jobs, and
// Retry sends them again.
func TestGiveUp(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		later  time.Duration // the service's clock ahead of the delivery
	}{
		{"refused", http.StatusBadRequest, 0},
		{"a day of 503", http.StatusServiceUnavailable, notify.GiveUpAfter + time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, rc := webhookRig(t, func(o *notify.Options) { o.Now = func() time.Time { return time.Now().Add(c.later) } })
			ok := make(chan struct{})
			rc.generic.status = func(int) int {
				select {
				case <-ok:
					return http.StatusOK
				default:
					return c.status
				}
			}
			r.start(t, 2)
			r.propose(t, 240000)
			waitFor(t, "the given-up delivery", func() bool { return r.deliveryStatuses(t)["failed"] == 1 })
			ev := r.events(t, "notification.failed")
			if len(ev) != 1 || strings.Contains(ev[0], "ORD-1004") || !strings.Contains(ev[0], fmt.Sprint(c.status)) {
				t.Fatalf("notification.failed = %q, want one naming the answer, without the message", ev)
			}
			var failed []jobs.Failed
			waitFor(t, "the job listed as failed", func() bool {
				failed, _, _ = jobs.ListFailed(t.Context(), r.db, 10)
				return len(failed) == 1
			})
			if failed[0].Kind != notify.JobDeliver {
				t.Errorf("failed job kind %q", failed[0].Kind)
			}
			close(ok)
			if err := jobs.Retry(t.Context(), r.db, failed[0].ID, func(context.Context, *store.Tx, string) error { return nil }); err != nil {
				t.Fatal(err)
			}
			r.queue.Notify()
			waitFor(t, "the retried delivery", func() bool { return r.deliveryStatuses(t)["delivered"] == 3 })
		})
	}
}

// TestSecretsStaySealed: a webhook URL (its path is the credential) and a
// signing secret are stored only sealed, never listed, and a failing
// channel's error does not show them.
func TestSecretsStaySealed(t *testing.T) {
	r := newRig(t)
	down := newReceiver(t)
	down.Close()
	r.channel(t, notify.Input{Name: "slack", Kind: notify.Slack, Secret: notify.Secret{URL: down.URL + "/services/T0/B0/XXSECRETXX"}})
	r.channel(t, notify.Input{Name: "hook", Kind: notify.Webhook, Secret: notify.Secret{URL: down.URL + "/h?token=XXSECRETXX", SigningSecret: signingSecret}})
	dump, err := store.Strings(t.Context(), r.db.Read(), `SELECT name || config || secret_sealed FROM notify_channels`)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(dump, "\n"); strings.Contains(s, "XXSECRETXX") || strings.Contains(s, signingSecret) {
		t.Errorf("a secret is stored in the clear: %s", s)
	}
	list, _ := notify.Channels(t.Context(), r.db.Read())
	if len(list) != 2 || list[1].Config.URLShown != down.URL || !list[1].HasSecret {
		t.Errorf("listed: %+v", list)
	}
	for _, name := range []string{"slack", "hook"} {
		res, err := r.svc.SendTest(t.Context(), admin, name)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := notify.GetChannel(t.Context(), r.db.Read(), name)
		if res.Err == nil || !c.Failing() || strings.Contains(c.LastError, "XXSECRETXX") || strings.Contains(res.Err.Error(), "XXSECRETXX") {
			t.Errorf("%s: test error %v, channel failing %v, last error %q: want failing without the secret", name, res.Err, c.Failing(), c.LastError)
		}
	}
	audited, _ := store.Strings(t.Context(), r.db.Read(), `SELECT details FROM audit_events`)
	if s := strings.Join(audited, "\n"); strings.Contains(s, "XXSECRETXX") || strings.Contains(s, signingSecret) {
		t.Errorf("the audit trail holds a secret: %s", s)
	}
	// An edit that leaves the secret blank keeps it.
	if _, err := r.svc.SaveChannel(t.Context(), admin, "hook", notify.Input{Name: "hook2", Kind: notify.Webhook}); err != nil {
		t.Errorf("edit keeping the secret: %v", err)
	}
}

// TestEgress: without development mode, channels may not point inside the
// network, as callbacks may not; the refusal names the field.
func TestEgress(t *testing.T) {
	r := newRig(t, func(o *notify.Options) { o.AllowInternal = false })
	for _, in := range []notify.Input{
		{Name: "slack", Kind: notify.Slack, Secret: notify.Secret{URL: "http://127.0.0.1:9/services/x"}},
		{Name: "am", Kind: notify.Alertmanager, Secret: notify.Secret{URL: "http://10.0.0.5:9093"}},
		{Name: "mail", Kind: notify.Email, Config: notify.Config{Host: "127.0.0.1", Port: 25, TLS: "starttls", From: "w@example.com", To: []string{"a@example.com"}}},
	} {
		_, err := r.svc.SaveChannel(t.Context(), admin, "", in)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || !strings.Contains(ve.Fields["url"]+ve.Fields["host"], "inside the network") {
			t.Errorf("%s: save = %v, want a refusal of the internal address", in.Name, err)
		}
	}
	if list, _ := notify.Channels(t.Context(), r.db.Read()); len(list) != 0 {
		t.Errorf("refused channels were saved: %+v", list)
	}
}

// TestRouteFilters: a route hears only its tenant's actions, of its
// tools, from its amount.
func TestRouteFilters(t *testing.T) {
	r, rc := webhookRig(t)
	// Narrow the generic channel's route: refunds from $1,000.00.
	routes, _ := notify.Routes(t.Context(), r.db.Read())
	for _, rt := range routes {
		if rt.ChannelName == "generic" && rt.Event == notify.EventActionPending {
			if err := notify.DeleteRoute(t.Context(), r.db, admin, rt.ID); err != nil {
				t.Fatal(err)
			}
			// The trail says which route stopped (event and channel).
			evs, err := audit.List(t.Context(), r.db.Read(), audit.Filter{Limit: 1})
			if err != nil || len(evs) != 1 || evs[0].Verb != "notify.route_deleted" ||
				evs[0].Details["channel"] != "generic" || evs[0].Details["event"] != notify.EventActionPending {
				t.Errorf("route_deleted event = %+v (%v), want its event and channel", evs, err)
			}
			if err := notify.DeleteRoute(t.Context(), r.db, admin, rt.ID); !errors.Is(err, notify.ErrRouteNotFound) {
				t.Errorf("deleting it again = %v, want ErrRouteNotFound", err)
			}
			min := int64(100000)
			r.route(t, notify.Route{Event: notify.EventActionPending, ChannelID: rt.ChannelID, TenantID: r.tenant.ID, MinAmountMinor: &min, Tools: []string{"refund"}})
			r.route(t, notify.Route{Event: notify.EventActionPending, ChannelID: rt.ChannelID, TenantID: "another-tenant"})
		}
	}
	r.start(t, 2)
	r.propose(t, 5000)   // below the amount
	r.propose(t, 240000) // heard
	waitFor(t, "slack's two messages", func() bool { return len(rc.slack.requests()) == 2 })
	waitFor(t, "generic's message", func() bool { return len(rc.generic.requests()) >= 1 })
	r.waitSettled(t) // nothing more will be sent
	if got := len(rc.generic.requests()); got != 1 {
		t.Errorf("generic webhook got %d messages, want 1 (the refund above $1,000.00)", got)
	}
	if got := get(rc.generic.requests()[0].Decoded, "title"); got != "Approval needed: Refund $2,400.00 for ORD-1004" {
		t.Errorf("generic got %v", got)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    notify.Input
		s     notify.Secret
		field string // "" for valid
	}{
		{"slack ok", notify.Input{Name: "ops", Kind: notify.Slack}, notify.Secret{URL: "https://hooks.slack.com/services/T/B/x"}, ""},
		{"bad name", notify.Input{Name: "Ops Team", Kind: notify.Slack}, notify.Secret{URL: "https://hooks.slack.com/x"}, "name"},
		{"no url", notify.Input{Name: "ops", Kind: notify.Teams}, notify.Secret{}, "url"},
		{"ftp url", notify.Input{Name: "ops", Kind: notify.Slack}, notify.Secret{URL: "ftp://x"}, "url"},
		{"url with user", notify.Input{Name: "ops", Kind: notify.Slack}, notify.Secret{URL: "https://u:p@x.example/"}, "url"},
		{"short signing secret", notify.Input{Name: "h", Kind: notify.Webhook}, notify.Secret{URL: "https://x.example/", SigningSecret: "short"}, "signing_secret"},
		{"pagerduty without key", notify.Input{Name: "pd", Kind: notify.PagerDuty}, notify.Secret{URL: notify.DefaultPagerDutyURL}, "routing_key"},
		{"mail ok", notify.Input{Name: "m", Kind: notify.Email, Config: notify.Config{Host: "smtp.example.com", Port: 587, TLS: "starttls", From: "w@example.com", To: []string{"a@example.com"}}}, notify.Secret{}, ""},
		{"mail plaintext", notify.Input{Name: "m", Kind: notify.Email, Config: notify.Config{Host: "smtp.example.com", Port: 25, TLS: "none", From: "w@example.com", To: []string{"a@example.com"}}}, notify.Secret{}, "tls"},
		{"mail auth without password", notify.Input{Name: "m", Kind: notify.Email, Config: notify.Config{Host: "smtp.example.com", Port: 587, TLS: "starttls", Auth: "login", Username: "u", From: "w@example.com", To: []string{"a@example.com"}}}, notify.Secret{}, "password"},
		{"mail bad recipient", notify.Input{Name: "m", Kind: notify.Email, Config: notify.Config{Host: "smtp.example.com", Port: 587, TLS: "tls", From: "w@example.com", To: []string{"not an address"}}}, notify.Secret{}, "to"},
		{"unknown kind", notify.Input{Name: "x", Kind: "fax"}, notify.Secret{}, "kind"},
	} {
		errs := notify.Validate(c.in, c.s)
		switch {
		case c.field == "" && len(errs) > 0:
			t.Errorf("%s: Validate = %v, want valid", c.name, errs)
		case c.field != "" && errs[c.field] == "":
			t.Errorf("%s: Validate = %v, want a message for %s", c.name, errs, c.field)
		}
	}
}
