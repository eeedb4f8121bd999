package handlers

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// The audit filters, as query parameters. The audit page and the exports
// read them with auditQuery, so a link from one to the other selects the
// same events.
var auditParams = []string{"tenant", "actor", "verb", "subject_type", "subject_id", "from", "to", "since", "until"}

var (
	// auditVerbRe is a verb as Append accepts it, or a prefix of whole
	// words ending in a dot ("action.").
	auditVerbRe        = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\.?$`)
	auditSubjectTypeRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// auditQuery reads the audit filters of the request (auditParams) into the
// query they select, with the principal's tenant scope applied: a tenant
// outside the scope is refused (403), and without a tenant filter a
// principal scoped to some tenants gets only theirs. from and to are UTC
// dates (YYYY-MM-DD), both inclusive.
//
// What the user typed wrong is a *store.ValidationError naming each field
// (a 422 when not rendered); nothing is selected then.
func auditQuery(c echo.Context, user *identity.Principal) (audit.Query, error) {
	if user == nil {
		return audit.Query{}, Forbidden("Sign in to read the audit trail.")
	}
	in := c.QueryParams()
	get := func(name string) string { return strings.TrimSpace(in.Get(name)) }
	q := audit.Query{
		Tenant:      get("tenant"),
		ActorID:     get("actor"),
		Verb:        get("verb"),
		SubjectType: get("subject_type"),
		SubjectID:   get("subject_id"),
	}
	if q.Tenant != "" {
		if err := requireTenant(user, q.Tenant); err != nil {
			return audit.Query{}, err
		}
	} else if !user.AllTenantScope() {
		q.Tenants = slices.Clone(user.Tenants)
		if q.Tenants == nil {
			q.Tenants = []string{}
		}
	}

	errs := map[string]string{}
	for _, f := range []struct{ name, value string }{{"actor", q.ActorID}, {"subject_id", q.SubjectID}, {"tenant", q.Tenant}} {
		if len(f.value) > audit.MaxFieldBytes || !utf8.ValidString(f.value) {
			errs[f.name] = "Too long: the trail keeps at most 512 bytes here."
		}
	}
	if q.Verb != "" && !auditVerbRe.MatchString(q.Verb) {
		errs["verb"] = "Type a verb such as action.approved, or the start of one ending in a dot, such as action."
	}
	if q.SubjectType != "" && !auditSubjectTypeRe.MatchString(q.SubjectType) {
		errs["subject_type"] = "Type a subject type such as action, tenant or key: lower-case letters, digits and _."
	}
	var err error
	if q.Since, err = filterDay(get("from"), "from"); err != nil {
		errs["from"] = dayMessage(err)
	}
	if q.Until, err = filterDay(get("to"), "to"); err != nil {
		errs["to"] = dayMessage(err)
	}
	if !q.Until.IsZero() {
		q.Until = q.Until.AddDate(0, 0, 1) // "to" is inclusive: up to the end of that day
		if !q.Since.IsZero() && !q.Until.After(q.Since) {
			errs["to"] = "The end date is before the start date."
		}
	}
	// since and until are exact instants (RFC 3339), as export links pin
	// them; they take precedence over the dates.
	for _, b := range []struct {
		name string
		t    *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		if raw := get(b.name); raw != "" {
			t, err := audit.ParseTime(raw)
			if err != nil {
				errs[b.name] = fmt.Sprintf("The %s filter %v.", b.name, err)
				continue
			}
			*b.t = t
		}
	}
	if len(errs) > 0 {
		return audit.Query{}, &store.ValidationError{Fields: errs}
	}
	if err := audit.CheckQuery(q); err != nil {
		return audit.Query{}, &store.ValidationError{Fields: map[string]string{"verb": "The filters cannot match any event: " + err.Error() + "."}}
	}
	return q, nil
}

// dayMessage is filterDay's refusal as a field message.
func dayMessage(err error) string {
	var p *problem.Error
	if errors.As(err, &p) {
		return p.Message
	}
	return err.Error()
}

// auditFilterValues are the request's audit filters as typed, for links
// that keep them (paging, exports); empty ones are left out.
func auditFilterValues(in url.Values) url.Values {
	out := url.Values{}
	for _, name := range auditParams {
		if v := strings.TrimSpace(in.Get(name)); v != "" {
			out.Set(name, v)
		}
	}
	return out
}
