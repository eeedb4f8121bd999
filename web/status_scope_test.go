package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/wardenhq/warden/handlers"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
)

// copyActionAs inserts a copy of the action like (a row of the demo) as a
// new action id of tenant tenantID, with status and created time set.
func copyActionAs(t testing.TB, db *store.DB, likeSummary, id, tenantID, status string, created time.Time) {
	t.Helper()
	ctx := context.Background()
	err := db.Transact(ctx, func(tx *store.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT * FROM actions LIMIT 0`)
		if err != nil {
			return err
		}
		names, err := rows.Columns()
		if err != nil {
			return err
		}
		var cols, sel []string
		for _, c := range names {
			cols = append(cols, c)
			switch c {
			case "id", "tenant_id", "status", "idempotency_key", "created_at", "journey_id":
				sel = append(sel, "?")
			default:
				sel = append(sel, c)
			}
		}
		rows.Close()
		var args []any
		for _, c := range cols {
			switch c {
			case "id":
				args = append(args, id)
			case "tenant_id":
				args = append(args, tenantID)
			case "status":
				args = append(args, status)
			case "idempotency_key":
				args = append(args, "idem-"+id)
			case "created_at":
				args = append(args, store.FormatTime(created))
			case "journey_id":
				args = append(args, "")
			}
		}
		args = append(args, "%"+likeSummary+"%")
		_, err = tx.ExecContext(ctx, `INSERT INTO actions (`+strings.Join(cols, ", ")+`) SELECT `+strings.Join(sel, ", ")+
			` FROM actions WHERE summary LIKE ? LIMIT 1`, args...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An on-call engineer scoped to some tenants sees their own failed
// actions even when other tenants have more, older failures than fit on a
// page: the scope is part of the query, not a filter over its first page.
func TestStatusFailedActionsScopedInQuery(t *testing.T) {
	in := startWardenDemo(t, nil)
	ctx := context.Background()
	var beta tenants.Tenant
	if err := in.DB.Transact(ctx, func(tx *store.Tx) error {
		var err error
		beta, err = tenants.Insert(ctx, tx, "beta", "Beta")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	for i := range 25 {
		copyActionAs(t, in.DB, "$54.00", fmt.Sprintf("act_beta%02d", i), beta.ID, "failed", old.Add(time.Duration(i)*time.Minute))
	}
	if _, err := in.DB.Read().Exec(`UPDATE actions SET status = 'failed', failure = 'provider refused: account closed' WHERE summary LIKE '%$54.00%' AND id NOT LIKE 'act_beta%'`); err != nil {
		t.Fatal(err)
	}
	h := &handlers.Console{DB: in.DB, StatusView: in.Server.status}
	get := func(p *identity.Principal, target string) *goquery.Document {
		t.Helper()
		rec, err := callAs(t, h.Status, p, http.MethodGet, target, nil)
		if err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		doc, err := goquery.NewDocumentFromReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	acmeOncall := &identity.Principal{ID: "p-acme", Name: "Acme On-call", Roles: []string{identity.RoleOncall}, Tenants: []string{"acme"}}
	doc := get(acmeOncall, "/status")
	rows := doc.Find(`[data-testid="failed-actions"] tbody tr`)
	if rows.Length() != 1 || !strings.Contains(rows.Text(), "Refund $54.00") || strings.Contains(rows.Text(), "beta") {
		t.Errorf("acme on-call's failed actions = %d rows %q, want only acme's refund", rows.Length(), rows.Text())
	}
	if got := doc.Find(`[data-testid="failed-next"]`).Length(); got != 0 {
		t.Errorf("acme on-call has a next page of failures")
	}

	// Someone who sees every tenant pages through all 26, 20 at a time.
	all := &identity.Principal{ID: "p-all", Name: "All On-call", Roles: []string{identity.RoleOncall}, Tenants: []string{"*"}}
	doc = get(all, "/status")
	if n := doc.Find(`[data-testid="failed-actions"] tbody tr`).Length(); n != 20 {
		t.Errorf("first page lists %d failed actions, want 20", n)
	}
	if got := doc.Find(`[data-testid="failed-total"]`).Text(); !strings.HasPrefix(got, "26 ") {
		t.Errorf("failed total = %q, want 26", got)
	}
	next, ok := doc.Find(`[data-testid="failed-next"]`).Attr("href")
	if !ok {
		t.Fatal("no link to the next page of failed actions")
	}
	doc = get(all, next)
	if rows := doc.Find(`[data-testid="failed-actions"] tbody tr`); rows.Length() != 6 || !strings.Contains(rows.Text(), "Refund $54.00") {
		t.Errorf("second page = %d rows %q, want the last 6 with acme's refund", rows.Length(), rows.Text())
	}
}
