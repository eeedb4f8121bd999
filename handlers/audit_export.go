package handlers

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/views"
)

// Exports of the audit trail from the console.
//
// A browser downloads an export and its manifest as two files, so they
// come from two requests: GET /audit/export.jsonl (or .csv) streams the
// file, and GET /audit/export.jsonl.manifest.json, with the same query,
// makes the same export again without sending it and returns its signed
// manifest. The two describe the same rows because the query pins the end
// of the range: the links carry until=<the time the page was rendered>,
// and the events of a range that ends in the past do not change (the
// trail is append-only and Warden stamps events in the order it chains
// them). A request without until, or with one in the future, is
// redirected to the same URL with until pinned to now, so every export URL
// means one fixed set of rows.
//
// Tenant scope is enforced here, whatever the query says: an auditor
// scoped to tenants exports only a tenant of theirs (auditQuery). Every
// download of an export file is recorded in the trail as audit.export,
// with who, the filters, the row count and the file's SHA-256; a manifest
// holds no events and is not recorded.

// exportStall is how long a download may go without progress before its
// connection is dropped. It replaces the server's write timeout for
// exports, which may take longer than that in all but stall.
const exportStall = time.Minute

// AuditExportJSONL streams the filtered trail as JSON Lines.
func (h *Console) AuditExportJSONL(c echo.Context) error { return h.auditExport(c, audit.FormatJSONL) }

// AuditExportCSV streams the filtered trail as CSV.
func (h *Console) AuditExportCSV(c echo.Context) error { return h.auditExport(c, audit.FormatCSV) }

// AuditExportJSONLManifest is the signed manifest of the JSONL export of
// the same query.
func (h *Console) AuditExportJSONLManifest(c echo.Context) error {
	return h.auditExportManifest(c, audit.FormatJSONL)
}

// AuditExportCSVManifest is the signed manifest of the CSV export of the
// same query.
func (h *Console) AuditExportCSVManifest(c echo.Context) error {
	return h.auditExportManifest(c, audit.FormatCSV)
}

func (h *Console) auditExport(c echo.Context, format string) error {
	user := CurrentPrincipal(c)
	q, pinned, err := h.exportRequest(c, user)
	if err != nil || !pinned {
		return err
	}
	signer, err := h.auditSigner()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	res := c.Response()
	name := exportFileName(q, format)
	hdr := res.Header()
	hdr.Set(echo.HeaderContentType, map[string]string{
		audit.FormatJSONL: "application/x-ndjson; charset=utf-8",
		audit.FormatCSV:   "text/csv; charset=utf-8",
	}[format])
	hdr.Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	hdr.Set("Cache-Control", "no-store")

	// The errors are ErrNotSupported from test recorders only.
	rc := http.NewResponseController(res)
	_ = rc.SetWriteDeadline(time.Now().Add(exportStall))
	w := writerFunc(func(p []byte) (int, error) {
		_ = rc.SetWriteDeadline(time.Now().Add(exportStall))
		return res.Write(p)
	})
	_, err = audit.ExportRecorded(ctx, h.DB, q, format, AuditSentences(h.DB), w, signer, principalActor(user), time.Now())
	if err != nil && !res.Committed { // nothing sent yet: an error page
		hdr.Del(echo.HeaderContentDisposition)
		hdr.Del(echo.HeaderContentType)
		return err
	}
	if err != nil {
		// Part of the file is sent: drop the connection, so that the
		// browser reports a failed download rather than keeping a file
		// that ends early or whose export is not in the trail. A client
		// that went away is no failure of Warden's.
		if ctx.Err() == nil {
			slog.ErrorContext(ctx, "audit export failed after it began", "request_id", res.Header().Get(echo.HeaderXRequestID),
				"format", format, "err", err)
		}
		panic(http.ErrAbortHandler)
	}
	if !res.Committed { // an empty JSONL export writes no byte
		res.WriteHeader(http.StatusOK)
	}
	return nil
}

func (h *Console) auditExportManifest(c echo.Context, format string) error {
	q, pinned, err := h.exportRequest(c, CurrentPrincipal(c))
	if err != nil || !pinned {
		return err
	}
	signer, err := h.auditSigner()
	if err != nil {
		return err
	}
	m, err := audit.Export(c.Request().Context(), h.DB.Read(), q, format, AuditSentences(h.DB), io.Discard, signer, time.Now())
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := audit.WriteManifest(&buf, m); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+exportFileName(q, format)+`.manifest.json"`)
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, buf.Bytes())
}

// exportRequest reads an export's query. When the query's range does not
// end in the past, it redirects to the same address with until pinned to
// now and returns pinned false.
func (h *Console) exportRequest(c echo.Context, user *identity.Principal) (q audit.Query, pinned bool, err error) {
	q, err = auditQuery(c, user)
	if err != nil {
		return q, false, err
	}
	if q.Tenants != nil && len(q.Tenants) == 0 {
		return q, false, Forbidden("Your tenant scope holds no tenant, so there is nothing you may export.")
	}
	if now := time.Now(); q.Until.IsZero() || q.Until.After(now) {
		q.Until = now
		return q, false, c.Redirect(http.StatusSeeOther, c.Request().URL.Path+"?"+auditQueryValues(q).Encode())
	}
	return q, true, nil
}

// auditSigner is the installation's audit signing key, kept in the data
// directory beside the database.
func (h *Console) auditSigner() (*audit.Signer, error) {
	return audit.LoadOrCreateSigner(filepath.Dir(h.DB.Path()))
}

// auditQueryValues writes q as the query string auditQuery reads.
func auditQueryValues(q audit.Query) url.Values {
	v := url.Values{}
	for _, p := range [][2]string{
		{"tenant", q.Tenant}, {"actor", q.ActorID}, {"verb", q.Verb},
		{"subject_type", q.SubjectType}, {"subject_id", q.SubjectID},
	} {
		if p[1] != "" {
			v.Set(p[0], p[1])
		}
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.UTC().Format(time.RFC3339Nano))
	}
	return v
}

// auditExportLinks are the audit page's download links for its current
// filters.
type auditExportLinks struct {
	JSONL, JSONLManifest, CSV, CSVManifest string
}

// exportLinks are the links for the audit page rendered at renderedAt
// showing q: until is pinned to renderedAt (or kept when earlier), so the
// file and the manifest links describe the same rows however long apart
// they are followed.
func exportLinks(q audit.Query, renderedAt time.Time) auditExportLinks {
	if q.Until.IsZero() || q.Until.After(renderedAt) {
		q.Until = renderedAt
	}
	query := "?" + auditQueryValues(q).Encode()
	return auditExportLinks{
		JSONL:         "/audit/export.jsonl" + query,
		JSONLManifest: "/audit/export.jsonl.manifest.json" + query,
		CSV:           "/audit/export.csv" + query,
		CSVManifest:   "/audit/export.csv.manifest.json" + query,
	}
}

// exportFileName names an export by the end of its range, which the
// query pins: warden-audit-20250601T093000Z.jsonl.
func exportFileName(q audit.Query, format string) string {
	return "warden-audit-" + q.Until.UTC().Format("20060102T150405Z") + "." + format
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// AuditSentences writes an export's sentence column as the audit page
// words each event (views.EventSentence), for the console's exports and
// `warden audit export`. People are named as the event recorded them;
// the names of agent keys and the summaries of actions are looked up
// once per export, and never change, so the same rows always read the
// same and a manifest made by a second request hashes the same file.
func AuditSentences(db *store.DB) audit.Describe {
	keyNames, summaries := map[string]string{}, map[string]string{}
	return func(ctx context.Context, events []audit.Event) ([]string, error) {
		var wantActions, wantKeys []string
		for _, e := range events {
			if e.Actor.Type == audit.ActorKey {
				if _, seen := keyNames[e.Actor.ID]; !seen {
					keyNames[e.Actor.ID] = ""
					wantKeys = append(wantKeys, e.Actor.ID)
				}
			}
			if e.Subject.Type == "action" {
				if _, seen := summaries[e.Subject.ID]; !seen {
					summaries[e.Subject.ID] = ""
					wantActions = append(wantActions, e.Subject.ID)
				}
			}
		}
		found, err := approvals.Summaries(ctx, db.Read(), wantActions)
		if err != nil {
			return nil, err
		}
		maps.Copy(summaries, found)
		named, err := keys.Names(ctx, db.Read(), wantKeys)
		if err != nil {
			return nil, err
		}
		maps.Copy(keyNames, named)
		names := views.EventNames{Keys: keyNames, Actions: summaries}
		out := make([]string, len(events))
		for i, e := range events {
			out[i] = views.EventSentence(e, names)
		}
		return out, nil
	}
}
