package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/views"
)

const auditPageSize = 50

// AuditList shows the audit trail, newest first, a page at a time, each
// event as a sentence, filtered by tenant, actor, verb, subject and dates
// (auditQuery). A user scoped to some tenants sees only those tenants'
// events. A filter typed wrong is shown next to its field with a 422, and
// nothing is listed.
func (h *Console) AuditList(c echo.Context) error {
	v, err := auditView(c, h.DB)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if len(v.Errors) > 0 {
		status = http.StatusUnprocessableEntity
	}
	page := PageFor(c, "Audit trail")
	return Render(c, status, page, views.AuditList(page, v))
}

// AuditVerify walks the whole chain, holding it to every signed checkpoint,
// and shows the result on the audit page. The verification itself is
// recorded in the trail, with the head it verified.
func (h *Console) AuditVerify(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	key, err := audit.InstallationKey(h.DB)
	if err != nil {
		return fmt.Errorf("verify audit chain: %w", err)
	}
	head, verr := audit.Verify(ctx, h.DB.Read(), &audit.Trust{Key: key})
	res := &views.AuditVerifyResult{OK: verr == nil}
	var ce *audit.ChainError
	switch {
	case verr == nil:
		res.Message = fmt.Sprintf("Chain intact: %d events verified, head hash %s.", head.Seq, head.Hash)
	case errors.As(verr, &ce):
		res.Message = fmt.Sprintf("Chain broken at seq %d: %s. Events after it cannot be trusted.", ce.Seq, ce.Reason)
	default:
		return fmt.Errorf("verify audit chain: %w", verr)
	}
	if err := audit.RecordVerification(ctx, h.DB, principalActor(user), head, verr); err != nil {
		return err
	}
	v, err := auditView(c, h.DB)
	if err != nil {
		return err
	}
	v.Verify = res
	page := PageFor(c, "Audit trail")
	return Render(c, http.StatusOK, page, views.AuditList(page, v))
}

// auditView reads one page of the events the request's filters select,
// with what the page needs to show them as sentences.
func auditView(c echo.Context, st *store.DB) (views.AuditView, error) {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	in := c.QueryParams()
	v := views.AuditView{Now: time.Now(), Filter: views.AuditFilter{
		Tenant: in.Get("tenant"), Actor: in.Get("actor"), Verb: in.Get("verb"),
		SubjectType: in.Get("subject_type"), SubjectID: in.Get("subject_id"),
		From: in.Get("from"), To: in.Get("to"),
	}}
	page, err := listPage(c, auditPageSize)
	if err != nil {
		return views.AuditView{}, err
	}
	q, err := auditQuery(c, user)
	errs, invalid := fieldErrors(err)
	if err != nil && !invalid {
		return views.AuditView{}, err
	}
	if v.Tenants, _, err = tenantScope(ctx, st, user, ""); err != nil {
		return views.AuditView{}, err
	}
	if v.ChainStatus, err = chainStatus(ctx, st); err != nil {
		return views.AuditView{}, err
	}
	filters := auditFilterValues(in)
	v.Filtered = len(filters) > 0 || !page.First()
	if invalid {
		v.Errors = errs
		return v, nil
	}
	paged, err := audit.Page(ctx, st.Read(), q, page)
	if err != nil {
		return views.AuditView{}, err
	}
	v.Events = paged.Rows
	if v.Names, err = eventNames(ctx, st, v.Events); err != nil {
		return views.AuditView{}, err
	}
	v.NextPage, v.PrevPage = pageLinks("/audit", filters, paged)
	// The links pin the end of the range to now, so a file and its
	// manifest, downloaded one after the other, describe the same rows.
	l := exportLinks(q, time.Now())
	v.ExportJSONL, v.ExportJSONLManifest, v.ExportCSV, v.ExportCSVManifest = l.JSONL, l.JSONLManifest, l.CSV, l.CSVManifest
	return v, nil
}

// chainStatus is what the audit page says about the whole chain: its
// stored head and, once checkpoints exist, the newest one that verified.
func chainStatus(ctx context.Context, st *store.DB) (views.ChainStatus, error) {
	head, err := audit.StoredHead(ctx, st.Read())
	if err != nil {
		return views.ChainStatus{}, err
	}
	status := views.ChainStatus{Head: head}
	key, err := audit.InstallationKey(st)
	if err != nil {
		return views.ChainStatus{}, err
	}
	if key == nil {
		return status, nil // no signing key yet, so no checkpoint either
	}
	status.PublicKey = audit.FormatPublicKey(key)
	// A checkpoint is signed only after the events since the one before it
	// verified: the newest whose signature holds is the last verified head.
	cp, err := audit.LatestCheckpoint(ctx, st.Read())
	switch {
	case err == nil && cp.Verify(key) == nil:
		status.LastVerifiedCheckpoint = &views.CheckpointStatus{Seq: cp.Seq, Hash: cp.Hash, SignedAt: cp.Time}
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return views.ChainStatus{}, err
	}
	return status, nil
}

// eventNames looks up what the ids in events stand for: the principals
// and keys who acted, and the actions they acted on.
func eventNames(ctx context.Context, st *store.DB, events []audit.Event) (views.EventNames, error) {
	var principalIDs, actionIDs, keyIDs []string
	seenKeys, seenActions := map[string]bool{}, map[string]bool{}
	for _, e := range events {
		switch e.Actor.Type {
		case audit.ActorPrincipal:
			principalIDs = append(principalIDs, e.Actor.ID)
		case audit.ActorKey:
			if !seenKeys[e.Actor.ID] {
				seenKeys[e.Actor.ID] = true
				keyIDs = append(keyIDs, e.Actor.ID)
			}
		}
		if e.Subject.Type == "action" && !seenActions[e.Subject.ID] {
			seenActions[e.Subject.ID] = true
			actionIDs = append(actionIDs, e.Subject.ID)
		}
	}
	var n views.EventNames
	var err error
	if n.Principals, err = principals.NamesOf(ctx, st, principalIDs); err != nil {
		return views.EventNames{}, err
	}
	// One query for the page's keys and one for its actions, not one
	// each: a page of agents' events names up to 50 of them.
	if n.Keys, err = keys.Names(ctx, st.Read(), keyIDs); err != nil {
		return views.EventNames{}, err
	}
	if n.Actions, err = approvals.Summaries(ctx, st.Read(), actionIDs); err != nil {
		return views.EventNames{}, err
	}
	return n, nil
}
