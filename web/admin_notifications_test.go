package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/store"
)

// An admin adds a Slack channel on the Notifications page (the webhook URL
// is never shown back), sends a test that arrives, sees a failing channel
// shown failing with its error, adds and removes a route, and deletes the
// channel after confirming; every change is audited. Others may not open
// the page or post to it.
func TestAdminNotificationsPage(t *testing.T) {
	in, b := adminSession(t, "erin")
	var mu sync.Mutex
	var got []string
	status := http.StatusOK
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(body))
		w.WriteHeader(status)
	}))
	defer rcv.Close()
	hook := rcv.URL + "/services/T0/B0/hooksecret42"

	if p := b.get("/notifications"); p.Status != http.StatusOK || text(p, "channels-empty") == "" || text(p, "routes-empty") == "" {
		t.Fatalf("GET /notifications = %d", p.Status)
	}
	form := url.Values{"name": {"ops-slack"}, "kind": {notify.Slack}, "url": {hook}}
	if p := b.post("/notifications/channels", form, nil); p.Status != http.StatusForbidden {
		t.Fatalf("POST without CSRF = %d, want 403", p.Status)
	}
	if p := b.post("/notifications/channels", b.withCSRF(url.Values{"name": {"Ops Slack"}, "kind": {notify.Slack}}), nil); p.Status != http.StatusUnprocessableEntity ||
		text(p, "error-name") == "" || text(p, "error-url") == "" {
		t.Fatalf("invalid channel = %d, errors %q %q", p.Status, text(p, "error-name"), text(p, "error-url"))
	}
	p := b.post("/notifications/channels", b.withCSRF(form), nil)
	if !strings.HasPrefix(text(p, "notice"), "Channel added.") || !strings.Contains(text(p, "channel-ops-slack"), rcv.URL) ||
		text(p, "channel-status-ops-slack") != "not tried yet" {
		t.Fatalf("create: notice %q, row %q", text(p, "notice"), text(p, "channel-ops-slack"))
	}
	if strings.Contains(p.Body, "hooksecret42") {
		t.Fatal("the page shows the webhook URL's secret path")
	}

	p = b.post("/notifications/channels/ops-slack/test", b.withCSRF(url.Values{}), nil)
	if !strings.HasPrefix(text(p, "notice"), "The test message was accepted") || text(p, "channel-status-ops-slack") != "healthy" {
		t.Fatalf("test: notice %q, status %q", text(p, "notice"), text(p, "channel-status-ops-slack"))
	}
	mu.Lock()
	if len(got) != 1 || !strings.Contains(got[0], "Test message from Warden") {
		t.Errorf("the receiver got %q", got)
	}
	status = http.StatusNotFound
	mu.Unlock()
	p = b.post("/notifications/channels/ops-slack/test", b.withCSRF(url.Values{}), nil)
	if !strings.HasPrefix(text(p, "notice"), "The test message did not get through") || text(p, "channel-status-ops-slack") != "failing" ||
		!strings.Contains(text(p, "channel-error-ops-slack"), "404") || strings.Contains(p.Body, "hooksecret42") {
		t.Fatalf("failed test: notice %q, status %q, error %q", text(p, "notice"), text(p, "channel-status-ops-slack"), text(p, "channel-error-ops-slack"))
	}

	// An edit that leaves the URL blank keeps it.
	p = b.get("/notifications?edit=ops-slack")
	if v, _ := p.Doc.Find(`[data-testid="channel-form"] input[name="name"]`).Attr("value"); v != "ops-slack" || strings.Contains(p.Body, "hooksecret42") {
		t.Fatalf("edit form name %q", v)
	}
	p = b.post("/notifications/channels/ops-slack/edit", b.withCSRF(url.Values{"name": {"ops-slack"}, "kind": {notify.Slack}}), nil)
	if !strings.HasPrefix(text(p, "notice"), "Channel saved.") || text(p, "channel-status-ops-slack") == "failing" {
		t.Fatalf("edit: notice %q status %q", text(p, "notice"), text(p, "channel-status-ops-slack"))
	}
	ch, err := notify.GetChannel(t.Context(), in.DB.Read(), "ops-slack")
	if err != nil || !ch.HasSecret {
		t.Fatalf("after the edit: %+v, %v", ch, err)
	}

	if p := b.post("/notifications/routes", b.withCSRF(url.Values{"event": {notify.EventActionPending}, "channel": {ch.ID}, "min_amount": {"lots"}}), nil); p.Status != http.StatusUnprocessableEntity ||
		text(p, "error-min_amount") == "" {
		t.Fatalf("bad route = %d", p.Status)
	}
	// A bad amount does not hide the other fields' errors.
	if p := b.post("/notifications/routes", b.withCSRF(url.Values{"event": {notify.EventActionPending}, "channel": {ch.ID}, "min_amount": {"1,000"}, "recipients": {"group:"}}), nil); p.Status != http.StatusUnprocessableEntity ||
		text(p, "error-min_amount") == "" || !strings.Contains(text(p, "error-recipients"), "Name the group") {
		t.Fatalf("bad amount and people = %d, errors %q and %q; want both", p.Status, text(p, "error-min_amount"), text(p, "error-recipients"))
	}
	// People are e-mailed: a Slack channel cannot take them.
	if p := b.post("/notifications/routes", b.withCSRF(url.Values{"event": {notify.EventActionPending}, "channel": {ch.ID}, "recipients": {"group:payments"}}), nil); p.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(text(p, "error-recipients"), "e-mail channel") {
		t.Fatalf("people on a Slack route = %d, error %q", p.Status, text(p, "error-recipients"))
	}
	p = b.post("/notifications/routes", b.withCSRF(url.Values{"event": {notify.EventActionPending}, "channel": {ch.ID}, "min_amount": {"1000"}, "tools": {"issue_refund"}}), nil)
	routes, _ := notify.Routes(t.Context(), in.DB.Read())
	if !strings.HasPrefix(text(p, "notice"), "Route added.") || len(routes) != 1 || *routes[0].MinAmountMinor != 100000 ||
		!strings.Contains(text(p, "route-"+routes[0].ID), "from 1,000.00; tools issue_refund") {
		t.Fatalf("route: notice %q, routes %+v, row %q", text(p, "notice"), routes, text(p, "route-"+routes[0].ID))
	}
	// Removing a route asks first, saying who stops hearing of what;
	// opening the question removes nothing.
	href, _ := p.Doc.Find(`[data-testid="route-delete-` + routes[0].ID + `"]`).Attr("href")
	if confirm := b.get(href); confirm.Status != http.StatusOK || !strings.Contains(text(confirm, "confirm"), "channel ops-slack") ||
		!strings.Contains(text(confirm, "confirm-effect"), "nobody hears of them") {
		t.Fatalf("remove route %q: %d, summary %q, effect %q; want a question naming the channel", href, confirm.Status, text(confirm, "confirm"), text(confirm, "confirm-effect"))
	}
	if rs, _ := notify.Routes(t.Context(), in.DB.Read()); len(rs) != 1 {
		t.Fatalf("opening the removal question removed the route: %d routes", len(rs))
	}
	p = b.post("/notifications/settings", b.withCSRF(url.Values{"quiet_seconds": {"-5"}, "escalate_percent": {"100"}}), nil)
	if p.Status != http.StatusUnprocessableEntity || text(p, "error-quiet_seconds") == "" {
		t.Fatalf("bad quiet time = %d", p.Status)
	}
	p = b.post("/notifications/settings", b.withCSRF(url.Values{"quiet_seconds": {"600"}, "escalate_percent": {"100"}}), nil)
	if p.Status != http.StatusUnprocessableEntity || text(p, "error-escalate_percent") == "" {
		t.Fatalf("bad escalation share = %d", p.Status)
	}
	if q, _ := notify.QuietTime(t.Context(), in.DB.Read()); q.Seconds() != 300 {
		t.Fatalf("a refused form changed the quiet time to %v", q)
	}
	p = b.post("/notifications/settings", b.withCSRF(url.Values{"quiet_seconds": {"600"}, "escalate_percent": {"75"}, "remind_minutes": {"30"}}), nil)
	pct, _ := notify.EscalationPercent(t.Context(), in.DB.Read())
	remind, _ := notify.ReminderWait(t.Context(), in.DB.Read())
	if q, _ := notify.QuietTime(t.Context(), in.DB.Read()); text(p, "notice") != "Timing saved." || q.Seconds() != 600 || pct != 75 || remind.Minutes() != 30 {
		t.Fatalf("timing: notice %q, quiet %v, escalation %d%%", text(p, "notice"), q, pct)
	}

	p = b.get("/notifications/channels/ops-slack/delete")
	if !strings.Contains(text(p, "confirm-effect"), "1 routes") {
		t.Fatalf("delete confirmation: %q", text(p, "confirm-effect"))
	}
	p = b.post("/notifications/channels/ops-slack/delete", b.withCSRF(url.Values{}), nil)
	if text(p, "notice") != "Channel deleted with its routes." || text(p, "channel-ops-slack") != "" {
		t.Fatalf("delete: notice %q", text(p, "notice"))
	}
	verbs, _ := store.Strings(t.Context(), in.DB.Read(), `SELECT verb FROM audit_events WHERE verb LIKE 'notify.%' ORDER BY seq`)
	want := "notify.channel_created notify.channel_tested notify.channel_tested notify.channel_changed notify.route_added notify.quiet_time_set notify.reminder_set notify.escalation_set notify.channel_deleted"
	if strings.Join(verbs, " ") != want {
		t.Errorf("audited %v, want %s", verbs, want)
	}
	details, _ := store.Strings(t.Context(), in.DB.Read(), `SELECT details FROM audit_events`)
	if strings.Contains(strings.Join(details, ""), "hooksecret42") {
		t.Error("the audit trail holds the webhook's secret")
	}

	// An approver may neither open the page nor post to it.
	alice := newBrowser(t, in.URL)
	alice.loginDev("alice")
	if p := alice.get("/notifications"); p.Status != http.StatusForbidden {
		t.Errorf("alice GET /notifications = %d, want 403", p.Status)
	}
	if p := alice.post("/notifications/channels", alice.withCSRF(form), nil); p.Status != http.StatusForbidden {
		t.Errorf("alice POST = %d, want 403", p.Status)
	}
}
