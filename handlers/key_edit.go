package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/views"
)

var keyEditNotices = map[string]string{
	"scopes":           "Scopes saved. They apply from the key's next request.",
	"scopes_unchanged": "Those are the key's scopes; nothing changed.",
	"rate":             "Rate limit saved. It applies from the key's next request.",
	"rate_unchanged":   "That is the key's rate limit; nothing changed.",
	"expiry":           "Expiry saved. The key is refused from then on.",
	"expiry_removed":   "Expiry removed. The key no longer expires.",
	"expiry_unchanged": "That is the key's expiry; nothing changed.",
}

// KeyScopes changes a key's scopes. Scopes that only narrow the key
// (keys.Widening finds nothing new) apply at once; any that widen it wait
// for a second admin (changes.KeyScopes), bound to the scopes as they are
// now. Scopes are checked as when a key is created; a scope the key
// already has need not be one Warden still offers.
func (h *Console) KeyScopes(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	k, err := keyInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	if k.RevokedAt != nil {
		return keys.ErrRevokedKey
	}
	params, err := c.FormParams()
	if err != nil {
		return err
	}
	choices, err := keyFormChoices(ctx, h.DB, h)
	if err != nil {
		return err
	}
	form := views.KeyScopesForm{Choices: views.ScopeChoices{Skills: choices.skills, Tools: choices.tools, Models: choices.models},
		Scopes: params["scopes"], Patterns: strings.TrimSpace(params.Get("scope_patterns")), Errors: views.FieldErrors{}}
	scopes := keys.NormalScopes(append(slices.Clone(form.Scopes), strings.Fields(form.Patterns)...))
	msg := keys.CheckScopes(scopes)
	if msg == "" {
		offered, err := choices.offered(ctx, h.DB)
		if err != nil {
			return err
		}
		var fresh []string
		for _, sc := range scopes {
			if !slices.Contains(k.Scopes, sc) {
				fresh = append(fresh, sc)
			}
		}
		msg = keys.UnknownScope(fresh, offered)
	}
	if msg != "" {
		form.Errors["scopes"] = msg
		return h.renderKeyShow(c, http.StatusUnprocessableEntity, k, func(v *views.KeyShowView) { v.ScopesForm = form })
	}
	before := keys.NormalScopes(k.Scopes)
	if widens := keys.Widening(before, scopes); len(widens) > 0 {
		var removes []string
		for _, sc := range before {
			if !slices.Contains(scopes, sc) {
				removes = append(removes, sc)
			}
		}
		summary := fmt.Sprintf("Widen key %s's scopes: add %s", k.Name, strings.Join(widens, ", "))
		if len(removes) > 0 {
			summary += "; remove " + strings.Join(removes, ", ")
		}
		ch, err := h.govern(c, user, changes.Proposal{Kind: changes.KeyScopes, TenantID: k.TenantID, TenantSlug: k.TenantSlug, Subject: k.ID,
			Summary: summary, Before: changes.KeyScopesValue{Scopes: before},
			After: changes.KeyScopesValue{Scopes: scopes, Adds: widens, Removes: removes}})
		if err != nil || ch != nil {
			return changeRedirect(c, ch, err)
		}
	}
	changed, err := keys.SetScopes(ctx, h.DB, principalActor(user), k.ID, scopes)
	if errs, ok := fieldErrors(err); ok {
		form.Errors = errs
		return h.renderKeyShow(c, http.StatusUnprocessableEntity, k, func(v *views.KeyShowView) { v.ScopesForm = form })
	}
	if err != nil {
		return err
	}
	done := "scopes"
	if !changed {
		done = "scopes_unchanged"
	}
	return seeOther(c, "/keys/"+k.ID+"?done="+done)
}

// KeyRate changes a key's request rate limit: lowering applies at once,
// raising either number waits for a second admin (changes.KeyRequestRate).
// The numbers are digits only: "1e9", "1,000" or " 5 " are refused, not
// read as something the admin may not have meant.
func (h *Console) KeyRate(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	k, err := keyInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	if k.RevokedAt != nil {
		return keys.ErrRevokedKey
	}
	form := views.KeyRateForm{PerMinute: c.FormValue("rate_per_min"), Burst: c.FormValue("burst"), Errors: views.FieldErrors{}}
	perMin, msg := formDigits(form.PerMinute, "requests a minute", 600000)
	if msg != "" {
		form.Errors["rate_per_min"] = msg
	}
	burst, msg := formDigits(form.Burst, "requests at once (the burst)", 10000)
	if msg != "" {
		form.Errors["burst"] = msg
	}
	if len(form.Errors) == 0 {
		for field, msg := range keys.CheckRate(perMin, burst) {
			form.Errors[field] = msg
		}
	}
	if len(form.Errors) > 0 {
		return h.renderKeyShow(c, http.StatusUnprocessableEntity, k, func(v *views.KeyShowView) { v.RateForm = form })
	}
	before := changes.KeyRequestRateValue{PerMinute: k.RatePerMin, Burst: k.Burst}
	after := changes.KeyRequestRateValue{PerMinute: perMin, Burst: burst}
	ch, err := h.govern(c, user, changes.Proposal{Kind: changes.KeyRequestRate, TenantID: k.TenantID, TenantSlug: k.TenantSlug, Subject: k.ID,
		Summary: fmt.Sprintf("Change key %s's rate limit from %s to %s", k.Name, requestRate(before), requestRate(after)),
		Before:  before, After: after})
	if err != nil || ch != nil {
		return changeRedirect(c, ch, err)
	}
	changed, err := keys.SetRate(ctx, h.DB, principalActor(user), k.ID, perMin, burst)
	if errs, ok := fieldErrors(err); ok {
		form.Errors = errs
		return h.renderKeyShow(c, http.StatusUnprocessableEntity, k, func(v *views.KeyShowView) { v.RateForm = form })
	}
	if err != nil {
		return err
	}
	done := "rate"
	if !changed {
		done = "rate_unchanged"
	}
	return seeOther(c, "/keys/"+k.ID+"?done="+done)
}

// KeyExpiry changes when a key stops working, as a date (00:00 UTC on
// that day, as when it is created) or empty for never. Setting one where
// there was none, or an earlier one, applies at once; removing it or a
// later one waits for a second admin (changes.KeyExpiry), bound to the
// expiry as it is now. An expiry not in the future is refused first, so
// it never becomes a pending change either.
func (h *Console) KeyExpiry(c echo.Context) error {
	ctx := c.Request().Context()
	user := CurrentPrincipal(c)
	k, err := keyInScope(ctx, h.DB.Read(), user, c.Param("id"))
	if err != nil {
		return err
	}
	if k.RevokedAt != nil {
		return keys.ErrRevokedKey
	}
	now := time.Now()
	form := views.KeyExpiryForm{ExpiresAt: c.FormValue("expires_at"), Errors: views.FieldErrors{}}
	var at *time.Time
	if raw := strings.TrimSpace(form.ExpiresAt); raw != "" {
		day, err := time.ParseInLocation("2006-01-02", raw, time.UTC)
		switch {
		case err != nil:
			form.Errors["expires_at"] = "Enter a date such as 2027-01-31, or leave it empty for a key that does not expire."
		case k.ExpiresAt != nil && k.ExpiresAt.UTC().Format("2006-01-02") == raw:
			// The day the form shows for an expiry set to the minute
			// elsewhere (the API, the CLI): sent back unchanged, it
			// keeps the expiry as it is rather than moving it to 00:00.
			at = k.ExpiresAt
		default:
			at = &day
		}
	}
	if len(form.Errors) == 0 {
		if msg := keys.CheckExpiry(at, now); msg != "" {
			form.Errors["expires_at"] = msg
		}
	}
	if len(form.Errors) > 0 {
		return h.renderKeyShow(c, http.StatusUnprocessableEntity, k, func(v *views.KeyShowView) { v.ExpiryForm = form })
	}
	before, after := changes.ExpiryValue(k.ExpiresAt), changes.ExpiryValue(at)
	summary := fmt.Sprintf("Change key %s's expiry from %s to %s", k.Name, expiryText(k.ExpiresAt), expiryText(at))
	if at == nil {
		summary = fmt.Sprintf("Remove key %s's expiry (%s)", k.Name, expiryText(k.ExpiresAt))
	}
	ch, err := h.govern(c, user, changes.Proposal{Kind: changes.KeyExpiry, TenantID: k.TenantID, TenantSlug: k.TenantSlug, Subject: k.ID,
		Summary: summary, Before: before, After: after})
	if err != nil || ch != nil {
		return changeRedirect(c, ch, err)
	}
	changed, err := keys.SetExpiry(ctx, h.DB, principalActor(user), k.ID, at, now)
	if errs, ok := fieldErrors(err); ok {
		form.Errors = errs
		return h.renderKeyShow(c, http.StatusUnprocessableEntity, k, func(v *views.KeyShowView) { v.ExpiryForm = form })
	}
	if err != nil {
		return err
	}
	done := "expiry"
	switch {
	case !changed:
		done = "expiry_unchanged"
	case at == nil:
		done = "expiry_removed"
	}
	return seeOther(c, "/keys/"+k.ID+"?done="+done)
}

// expiryText is a key's expiry as people read it.
func expiryText(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// expiryDate is a key's expiry as the form's date field holds it.
func expiryDate(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02")
}

// requestRate is a key's request rate limit as people read it.
func requestRate(r changes.KeyRequestRateValue) string {
	return fmt.Sprintf("%d requests a minute (burst %d)", r.PerMinute, r.Burst)
}

// formDigits reads a whole number typed as digits only, at most max; the
// message says what to type, or is "".
func formDigits(raw, what string, max int) (int, string) {
	switch {
	case raw == "":
		return 0, "Enter the number of " + what + "."
	case strings.HasPrefix(strings.TrimSpace(raw), "-"):
		return 0, "The number of " + what + " cannot be negative."
	case !allDigits(raw):
		return 0, fmt.Sprintf("Enter the number of %s in digits only, such as 600: no spaces, commas, signs or exponents (%q).", what, raw)
	case len(raw) > 9:
		return 0, fmt.Sprintf("The number of %s must be at most %d.", what, max)
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, "Enter the number of " + what + " in digits only, such as 600."
	}
	return n, ""
}

// keyScopesForm fills the key page's scopes form from the key: boxes for
// what the form offers, the rest (patterns, MCP tools, names no box
// offers) typed.
func keyScopesForm(ctx context.Context, h *Console, k keys.Key) (views.KeyScopesForm, error) {
	ch, err := keyFormChoices(ctx, h.DB, h)
	if err != nil {
		return views.KeyScopesForm{}, err
	}
	boxes := keys.Offered(ch.skills, ch.tools, ch.models)
	f := views.KeyScopesForm{Choices: views.ScopeChoices{Skills: ch.skills, Tools: ch.tools, Models: ch.models}}
	var typed []string
	for _, sc := range k.Scopes {
		if slices.Contains(boxes, sc) {
			f.Scopes = append(f.Scopes, sc)
		} else {
			typed = append(typed, sc)
		}
	}
	f.Patterns = strings.Join(typed, " ")
	return f, nil
}

// renderKeyShow renders a key's page with its forms as stored, then
// edit's changes (a form coming back with its errors).
func (h *Console) renderKeyShow(c echo.Context, status int, k keys.Key, edit func(*views.KeyShowView)) error {
	ctx := c.Request().Context()
	by, err := principals.NameOf(ctx, h.DB, k.CreatedBy)
	if err != nil {
		return err
	}
	limits, err := keyModelLimitsForm(ctx, h.DB.Read(), k.ID)
	if err != nil {
		return err
	}
	limits.Notice = doneNotice(c, keyModelNotices)
	scopes, err := keyScopesForm(ctx, h, k)
	if err != nil {
		return err
	}
	notice := doneNotice(c, keyEditNotices)
	rate := views.KeyRateForm{PerMinute: strconv.Itoa(k.RatePerMin), Burst: strconv.Itoa(k.Burst)}
	expiry := views.KeyExpiryForm{ExpiresAt: expiryDate(k.ExpiresAt)}
	switch done := c.QueryParam("done"); {
	case strings.HasPrefix(done, "rate"):
		rate.Notice = notice
	case strings.HasPrefix(done, "expiry"):
		expiry.Notice = notice
	default:
		scopes.Notice = notice
	}
	pending, err := changes.PendingOn(ctx, h.DB.Read(), k.ID, time.Now(), changes.KeyRateLimit, changes.KeyScopes, changes.KeyRequestRate, changes.KeyExpiry)
	if err != nil {
		return err
	}
	now := time.Now()
	v := views.KeyShowView{Key: k, State: keyState(k, now), CreatedBy: by, PreviousCallbackValid: k.PreviousCallbackValid(now),
		ModelLimits: limits, ScopesForm: scopes, RateForm: rate, ExpiryForm: expiry, Pending: pending}
	if edit != nil {
		edit(&v)
	}
	noStore(c)
	page := PageFor(c, k.Name)
	page.Active = "/keys"
	return Render(c, status, page, views.KeyShow(page, v))
}
