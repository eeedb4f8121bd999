package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/views"
)

// adminSession starts Warden, seeds the catalog with two tools and signs
// in as user.
func adminSession(t *testing.T, user string) (*instance, *browser) {
	t.Helper()
	return adminSessionEnv(t, user, nil)
}

// adminSessionEnv is adminSession with settings (WARDEN_*) of its own.
func adminSessionEnv(t *testing.T, user string, env map[string]string) (*instance, *browser) {
	t.Helper()
	in := startWarden(t, env)
	in.waitReady(t)
	adminSeedTools(t, in.DB)
	b := newBrowser(t, in.URL)
	b.loginDev(user)
	return in, b
}

// adminSeedTools puts lookup_order (low, on) and issue_refund (high, on)
// into the catalog.
func adminSeedTools(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	for _, tl := range []tools.Tool{
		{Name: "lookup_order", Description: "Find an order", Impact: risk.ImpactLow, Reversibility: risk.Reversible},
		{Name: "issue_refund", Description: "Refund an order", Impact: risk.ImpactHigh, Reversibility: risk.Irreversible},
	} {
		tl.Provider, tl.Timeout, tl.MaxAttempts = tools.ProviderBuiltin, 5*time.Second, 3
		tl.ArgsSchema, tl.Enabled, tl.ApprovalTTL = json.RawMessage(`{"type":"object"}`), true, 24*time.Hour
		if err := db.Transact(ctx, func(tx *store.Tx) error { return catalog.Upsert(ctx, tx, tl) }); err != nil {
			t.Fatal(err)
		}
	}
}

// adminTenant creates a tenant directly (no audit event), for tests that
// need more than acme.
func adminTenant(t *testing.T, db *store.DB, slug, name string) tenants.Tenant {
	t.Helper()
	var tn tenants.Tenant
	err := db.Transact(context.Background(), func(tx *store.Tx) (err error) {
		tn, err = tenants.Insert(context.Background(), tx, slug, name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

func adminTenantBySlug(t *testing.T, db *store.DB, slug string) tenants.Tenant {
	t.Helper()
	tn, err := tenants.BySlug(context.Background(), db.Read(), slug)
	if err != nil {
		t.Fatalf("tenant %s: %v", slug, err)
	}
	return tn
}

// adminEvents returns every audit event with the verb, oldest first.
func adminEvents(t *testing.T, db *store.DB, verb string) []audit.Event {
	t.Helper()
	evs, err := audit.List(context.Background(), db.Read(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Event
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Verb == verb {
			out = append(out, evs[i])
		}
	}
	return out
}

// withCSRF adds the session's CSRF token to a form.
func (b *browser) withCSRF(form url.Values) url.Values {
	b.t.Helper()
	out := url.Values{}
	for k, v := range form {
		out[k] = v
	}
	out.Set("_csrf", b.csrf())
	return out
}

// adminJourney is a journey row for tests to insert.
type adminJourney struct {
	ID, TenantID, KeyID, PrincipalID, Skill, Status, ErrorCode, Input, Output string
	CostMicros                                                                int64
	Created                                                                   time.Time
	Steps                                                                     []adminStep
}

type adminStep struct {
	Kind, Tool, Args, Result, Status, Error string
	Units                                   int64
}

// adminInsertJourneys writes journeys and their steps with SQL, as the
// runtime would have recorded them.
func adminInsertJourneys(t *testing.T, db *store.DB, js ...adminJourney) {
	t.Helper()
	ctx := context.Background()
	err := db.Transact(ctx, func(tx *store.Tx) error {
		for _, j := range js {
			if j.Created.IsZero() {
				j.Created = time.Now()
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO journeys (id, tenant_id, key_id, principal_id, request_id, correlation_id,
				skill, release_digest, status, error_code, input, output, input_tokens, output_tokens, tool_units, review_units,
				cost_micros, reserved_micros, latency_ms, created_at, finished_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 120, 45, 2, 0, ?, 0, 830, ?, ?)`,
				j.ID, j.TenantID, j.KeyID, j.PrincipalID, "req-"+j.ID, "corr-"+j.ID, j.Skill, "sha256:feedbeef", j.Status,
				j.ErrorCode, j.Input, j.Output, j.CostMicros, store.FormatTime(j.Created), store.FormatTime(j.Created.Add(830*time.Millisecond)))
			if err != nil {
				return fmt.Errorf("insert journey %s: %w", j.ID, err)
			}
			for n, s := range j.Steps {
				_, err := tx.ExecContext(ctx, `INSERT INTO journey_steps (journey_id, n, kind, tool, arguments, result, status, error, units, latency_ms, started_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 40, ?)`,
					j.ID, n+1, s.Kind, s.Tool, s.Args, s.Result, s.Status, s.Error, s.Units, store.FormatTime(j.Created))
				if err != nil {
					return fmt.Errorf("insert step %d of %s: %w", n+1, j.ID, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// callAs runs one handler directly, as principal p, the way the router
// would after its role check. It is how tests reach scope rules that no
// demo user can exercise (the demo admin sees every tenant).
func callAs(t *testing.T, h echo.HandlerFunc, p *identity.Principal, method, target string, form url.Values, params ...string) (*httptest.ResponseRecorder, error) {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequest(method, target, body)
	if form != nil {
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
	}
	rec := httptest.NewRecorder()
	c := echo.New().NewContext(req, rec)
	var names, values []string
	for i := 0; i+1 < len(params); i += 2 {
		names, values = append(names, params[i]), append(values, params[i+1])
	}
	c.SetParamNames(names...)
	c.SetParamValues(values...)
	handlers.SetPrincipal(c, p)
	handlers.SetPage(c, views.Page{User: p, CSRF: "test"})
	return rec, h(c)
}

func httpStatus(err error) int {
	var p *problem.Error
	if errors.As(err, &p) {
		return p.Status()
	}
	if err != nil {
		return http.StatusInternalServerError
	}
	return 0
}

func adminLookupTenant(in *instance, slug string) (tenants.Tenant, error) {
	return tenants.BySlug(context.Background(), in.DB.Read(), slug)
}
