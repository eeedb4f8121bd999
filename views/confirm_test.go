package views

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
)

// Every confirmation page is one Confirm: the same frame, the testids the
// console tests look for, and names written by users escaped.
func TestConfirmPages(t *testing.T) {
	const evil = "<b>x</b>"
	p := Page{CSRF: "token"}
	until := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	key := keys.Key{ID: "k1", Name: "bot" + evil, Prefix: "abcd", TenantSlug: "acme", PreviousCallbackUntil: &until}
	keyWithSecret := key
	keyWithSecret.HasCallbackSecret = true
	tenant := tenants.Tenant{Slug: "acme", Name: "Acme" + evil}
	frozen := tenant
	frozen.Frozen = true
	action := approvals.Action{ID: "a1", Summary: "Refund" + evil}
	pending := approvals.Action{ID: "a2", Summary: "Reverse it", Status: approvals.StatusPending}
	rejected := approvals.Action{ID: "a3", Summary: "Reverse it", Status: approvals.StatusRejected}
	reverse := ReverseConfirmView{Action: action, TenantSlug: "acme", CompensatingTool: "reverse_refund"}
	reverseAgain, reverseOpen := reverse, reverse
	reverseAgain.Reversal, reverseOpen.Reversal = &rejected, &pending

	tests := []struct {
		name      string
		page      templ.Component
		title     string
		warning   string // "" when there is none
		warningID string
		effect    string
		submit    string
		submitID  string
		danger    bool
		action    string
		cancel    string
	}{
		{"freeze", TenantFreezeConfirm(p, TenantFreezeView{Tenant: tenant, Freeze: true}),
			"Freeze Acme" + evil + "?", "", "", "403 tenant_frozen", "Freeze acme", "confirm-submit", true, "/tenants/acme/freeze", "/tenants/acme"},
		{"freeze a frozen tenant", TenantFreezeConfirm(p, TenantFreezeView{Tenant: frozen, Freeze: true}),
			"Freeze Acme" + evil + "?", "acme is already frozen.", "", "until the tenant is unfrozen", "Freeze acme", "confirm-submit", true, "/tenants/acme/freeze", "/tenants/acme"},
		{"unfreeze", TenantFreezeConfirm(p, TenantFreezeView{Tenant: frozen}),
			"Unfreeze Acme" + evil + "?", "", "", "can call the API again", "Unfreeze acme", "confirm-submit", false, "/tenants/acme/unfreeze", "/tenants/acme"},
		{"unfreeze a tenant that is not frozen", TenantFreezeConfirm(p, TenantFreezeView{Tenant: tenant}),
			"Unfreeze Acme" + evil + "?", "acme is not frozen.", "", "can call the API again", "Unfreeze acme", "confirm-submit", false, "/tenants/acme/unfreeze", "/tenants/acme"},
		{"revoke", KeyRevokeConfirm(p, KeyRevokeView{Key: key, State: KeyActive}),
			"Revoke bot" + evil + "?", "", "", "wk_abcd… (tenant acme) will get 401", "Revoke key", "confirm-submit", true, "/keys/k1/revoke", "/keys"},
		{"revoke a revoked key", KeyRevokeConfirm(p, KeyRevokeView{Key: key, State: KeyRevoked}),
			"Revoke bot" + evil + "?", "already revoked", "", "cannot be restored", "Revoke key", "confirm-submit", true, "/keys/k1/revoke", "/keys"},
		{"generate a callback secret", KeyCallbackRotateConfirm(p, KeyCallbackRotateView{Key: key}),
			"Generate a callback secret for bot" + evil + "?", "", "", "no callbacks until this is done", "Generate callback secret", "confirm-submit", false, "/keys/k1/callback-secret/rotate", "/keys/k1"},
		{"rotate a callback secret", KeyCallbackRotateConfirm(p, KeyCallbackRotateView{Key: keyWithSecret}),
			"Rotate the callback secret of bot" + evil + "?", "", "", "keeps signing them too for 24 hours", "Rotate callback secret", "confirm-submit", false, "/keys/k1/callback-secret/rotate", "/keys/k1"},
		{"switch a tool off", ToolDisableConfirm(p, ToolSwitchView{Tool: tools.Tool{Name: "lookup_order", Enabled: true}}),
			"Switch off lookup_order?", "", "", "403 tool_disabled", "Switch off lookup_order", "confirm-submit", true, "/tools/lookup_order/disable", "/tools"},
		{"switch off a tool that is off", ToolDisableConfirm(p, ToolSwitchView{Tool: tools.Tool{Name: "lookup_order"}}),
			"Switch off lookup_order?", "lookup_order is already off.", "", "403 tool_disabled", "Switch off lookup_order", "confirm-submit", true, "/tools/lookup_order/disable", "/tools"},
		{"switch a model deployment off", ModelDisableConfirm(p, ModelSwitchView{Deployment: models.Deployment{Name: "gpt-east", Alias: "chat" + evil, Enabled: true}, Others: []string{"gpt-west"}}),
			"Switch off gpt-east?", "", "", "go to its other deployments that are on: gpt-west.", "Switch off gpt-east", "model-disable-submit", true, "/models/gpt-east/disable", "/models"},
		{"switch off the last deployment on", ModelDisableConfirm(p, ModelSwitchView{Deployment: models.Deployment{Name: "gpt-east", Alias: "chat", Enabled: true}}),
			"Switch off gpt-east?", "", "", "It is the last deployment of chat that is on: calls to chat will fail with 404 model_not_found.", "Switch off gpt-east", "model-disable-submit", true, "/models/gpt-east/disable", "/models"},
		{"switch off a deployment that is off", ModelDisableConfirm(p, ModelSwitchView{Deployment: models.Deployment{Name: "gpt-east", Alias: "chat"}}),
			"Switch off gpt-east?", "gpt-east is already off.", "model-already-off", "calls to chat will fail", "Switch off gpt-east", "model-disable-submit", true, "/models/gpt-east/disable", "/models"},
		{"reverse", ReverseConfirm(p, reverse),
			"Reverse this action?", "", "", "high-impact action, reverse_refund, in tenant acme", "Request the reversal", "confirm-reverse", true, "/approvals/a1/reverse", "/approvals/a1"},
		{"reverse while a reversal is open", ReverseConfirm(p, reverseOpen),
			"Reverse this action?", "A reversal was already requested: Reverse it (Awaiting approval).", "", "reverse_refund", "Request the reversal", "confirm-reverse", true, "/approvals/a1/reverse", "/approvals/a1"},
		{"reverse after a rejected reversal", ReverseConfirm(p, reverseAgain),
			"Reverse this action?", "ended without effect (Rejected)", "earlier-reversal", "reverse_refund", "Request the reversal", "confirm-reverse", true, "/approvals/a1/reverse", "/approvals/a1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.page.Render(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(b.String(), evil) {
				t.Errorf("page has %s unescaped:\n%s", evil, b.String())
			}
			doc, err := goquery.NewDocumentFromReader(&b)
			if err != nil {
				t.Fatal(err)
			}
			card := doc.Find(`[data-testid="confirm"]`)
			if card.Length() != 1 {
				t.Fatalf("%d confirm cards, want 1", card.Length())
			}
			squash := func(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }
			if got := squash(card.Find("h1")); got != tt.title {
				t.Errorf("title = %q, want %q", got, tt.title)
			}
			warn := card.Find(".alert-warn").First()
			if got := squash(warn); !strings.Contains(got, tt.warning) || (tt.warning == "") != (warn.Length() == 0) {
				t.Errorf("warning = %q, want one saying %q", got, tt.warning)
			}
			if got, _ := warn.Attr("data-testid"); got != tt.warningID {
				t.Errorf("warning testid = %q, want %q", got, tt.warningID)
			}
			if got := squash(card.Find(`[data-testid="confirm-effect"]`)); !strings.Contains(got, tt.effect) {
				t.Errorf("effect = %q, want it to say %q", got, tt.effect)
			}
			form := card.Find(`form[method="post"]`)
			if got, _ := form.Attr("action"); got != tt.action {
				t.Errorf("form posts to %q, want %q", got, tt.action)
			}
			if got, _ := form.Find(`input[name="_csrf"]`).Attr("value"); got != "token" {
				t.Errorf("csrf = %q, want the page's token", got)
			}
			button := form.Find(`button[type="submit"]`)
			if got := squash(button); got != tt.submit {
				t.Errorf("button = %q, want %q", got, tt.submit)
			}
			if got, _ := button.Attr("data-testid"); got != tt.submitID {
				t.Errorf("button testid = %q, want %q", got, tt.submitID)
			}
			if got := button.HasClass("btn-danger"); got != tt.danger || button.HasClass("btn-primary") == tt.danger {
				t.Errorf("button class = %q, want danger %v", button.AttrOr("class", ""), tt.danger)
			}
			if got := form.Find(`a.btn`).AttrOr("href", ""); got != tt.cancel {
				t.Errorf("cancel = %q, want %q", got, tt.cancel)
			}
		})
	}
}

// The note that rotating again ends the previous secret's grace period
// comes after the effect, and only while that secret still signs.
func TestKeyCallbackRotateConfirmEndsPrevious(t *testing.T) {
	until := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	key := keys.Key{ID: "k1", Name: "bot", HasCallbackSecret: true, PreviousCallbackUntil: &until}
	for _, valid := range []bool{false, true} {
		var b bytes.Buffer
		if err := KeyCallbackRotateConfirm(Page{}, KeyCallbackRotateView{Key: key, PreviousCallbackValid: valid}).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(&b)
		if err != nil {
			t.Fatal(err)
		}
		note := doc.Find(`[data-testid="confirm-effect"] ~ [data-testid="confirm-ends-previous"]`)
		if got := note.Length() == 1 && strings.Contains(note.Text(), "2026-01-02 03:04:05 UTC"); got != valid {
			t.Errorf("PreviousCallbackValid %v: note after the effect = %q", valid, note.Text())
		}
	}
}
