package handlers

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

func TestAuditQuery(t *testing.T) {
	all := &identity.Principal{ID: "p-dave", Roles: []string{"auditor"}, Tenants: []string{"*"}}
	acme := &identity.Principal{ID: "p-ann", Roles: []string{"auditor"}, Tenants: []string{"acme", "initech"}}
	none := &identity.Principal{ID: "p-nobody", Roles: []string{"auditor"}}
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name   string
		user   *identity.Principal
		query  string
		want   audit.Query
		fields []string // field errors, when the filter is refused
		status int      // another refusal's status
	}{
		{"nothing", all, "", audit.Query{}, nil, 0},
		{"scoped, no tenant", acme, "", audit.Query{Tenants: []string{"acme", "initech"}}, nil, 0},
		{"scoped to nothing", none, "", audit.Query{Tenants: []string{}}, nil, 0},
		{"tenant in scope", acme, "tenant=initech", audit.Query{Tenant: "initech"}, nil, 0},
		{"every field", all, "tenant=acme&actor=+p-1+&verb=action.&subject_type=action&subject_id=act_1&from=2026-03-01&to=2026-03-31",
			audit.Query{Tenant: "acme", ActorID: "p-1", Verb: "action.", SubjectType: "action", SubjectID: "act_1",
				Since: day(3, 1), Until: day(4, 1)}, nil, 0},
		{"to is inclusive", all, "from=2026-03-05&to=2026-03-05", audit.Query{Since: day(3, 5), Until: day(3, 6)}, nil, 0},
		{"exact verb", all, "verb=auth.login_failed", audit.Query{Verb: "auth.login_failed"}, nil, 0},
		{"tenant outside the scope", acme, "tenant=globex", audit.Query{}, nil, http.StatusForbidden},
		{"no principal", nil, "", audit.Query{}, nil, http.StatusForbidden},
		{"malformed date", all, "from=2026-02-30", audit.Query{}, []string{"from"}, 0},
		{"not a date", all, "to=last+week", audit.Query{}, []string{"to"}, 0},
		{"end before start", all, "from=2026-03-02&to=2026-03-01", audit.Query{}, []string{"to"}, 0},
		{"verb with capitals", all, "verb=Action.", audit.Query{}, []string{"verb"}, 0},
		{"verb with a double dot", all, "verb=action..", audit.Query{}, []string{"verb"}, 0},
		{"subject type", all, "subject_type=act-ion", audit.Query{}, []string{"subject_type"}, 0},
		{"several at once", all, "verb=%2A&from=x&to=y", audit.Query{}, []string{"from", "to", "verb"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/audit?"+tt.query, nil), httptest.NewRecorder())
			got, err := auditQuery(c, tt.user)
			var inv *store.ValidationError
			var p *problem.Error
			switch {
			case tt.fields != nil:
				if !errors.As(err, &inv) {
					t.Fatalf("auditQuery(%q) = %+v, %v; want field errors %v", tt.query, got, err, tt.fields)
				}
				var fields []string
				for _, f := range []string{"actor", "from", "subject_id", "subject_type", "tenant", "to", "verb"} {
					if inv.Fields[f] != "" {
						fields = append(fields, f)
					}
				}
				if !reflect.DeepEqual(fields, tt.fields) || len(inv.Fields) != len(tt.fields) {
					t.Errorf("auditQuery(%q) field errors = %v, want %v", tt.query, inv.Fields, tt.fields)
				}
				if !reflect.DeepEqual(got, audit.Query{}) {
					t.Errorf("auditQuery(%q) selects %+v with its refusal", tt.query, got)
				}
			case tt.status != 0:
				if !errors.As(err, &p) || p.Status() != tt.status {
					t.Errorf("auditQuery(%q) error = %v, want %d", tt.query, err, tt.status)
				}
			case err != nil:
				t.Fatalf("auditQuery(%q): %v", tt.query, err)
			case !reflect.DeepEqual(got, tt.want):
				t.Errorf("auditQuery(%q) = %+v, want %+v", tt.query, got, tt.want)
			}
		})
	}
}
