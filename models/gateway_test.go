package models_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/models/fakeupstream"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/platform/store/storetest"
	"github.com/wardenhq/warden/tenants"
)

// A tenant whose prompts must be redacted before they leave Warden is
// refused, not sent in the clear, by a gateway without a redactor.
func TestOutboundRedactionFailsClosedWithoutARedactor(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	sealer, err := seal.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeupstream.New()
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	actor := audit.Actor{Type: audit.ActorSystem, ID: "test"}
	if _, err := models.Create(ctx, db, sealer, actor, models.Deployment{Name: "f", Alias: "chat", BaseURL: up.URL + "/v1", UpstreamModel: "fake",
		ContextWindow: 8192, MaxOutputTokens: 64, Timeout: time.Second, Concurrency: 4, Enabled: true}, ""); err != nil {
		t.Fatal(err)
	}
	var tenant tenants.Tenant
	if err := db.Transact(ctx, func(tx *store.Tx) error {
		if tenant, err = tenants.Insert(ctx, tx, "t1", "T1"); err != nil {
			return err
		}
		return budgets.Set(ctx, tx, budgets.Spec{TenantID: tenant.ID, Period: budgets.Month, LimitMicros: 1_000_000, AlertPercent: 80}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := models.SetTenantSettings(ctx, db, actor, tenant, models.TenantSettings{Content: models.ContentRedacted, OutboundRedaction: true}); err != nil {
		t.Fatal(err)
	}
	g := models.NewGateway(db, sealer, nil, nil)
	caller := admission.Caller{Tenant: tenant, Key: keys.Key{ID: "k1", TenantID: tenant.ID, Scopes: []string{"model:chat"}}}
	w := httptest.NewRecorder()
	err = g.Chat(ctx, caller, []byte(`{"model":"chat","messages":[{"role":"user","content":"mail jane@example.com"}]}`), flusher{w})
	if p := problem.From(err); p.Status() != http.StatusServiceUnavailable || p.Code != "redaction_unavailable" || fake.Requests() != 0 {
		t.Fatalf("err = %v (%d %s), %d upstream requests", err, p.Status(), p.Code, fake.Requests())
	}
	if b, _ := budgets.Get(ctx, db.Read(), tenant.ID); b.ReservedMicros != 0 || b.SpentMicros != 0 {
		t.Fatalf("budget after a refused call = %+v", b)
	}
}

type flusher struct{ *httptest.ResponseRecorder }

func (flusher) Flush() {}
