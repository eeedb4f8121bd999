package views

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
)

// An audit row links to what it is about, so an auditor goes from an event
// to its action, key, tenant or tool by clicking. A link is offered only
// when the viewer may open its page (Page.MayOpen, from the route table).

// Link is a labelled address.
type Link struct {
	Label, URL string
}

// subjectLink is the page of the event's subject, or a zero Link when it
// has none or the viewer may not open it.
func subjectLink(p Page, e audit.Event) Link {
	id := e.Subject.ID
	esc := url.PathEscape
	switch e.Subject.Type {
	case "action":
		if id != "" && p.User != nil && len(p.User.Roles) > 0 {
			return Link{"Open action", "/approvals/" + esc(id)}
		}
	case "key":
		if id != "" && p.MayOpen("/keys") {
			return Link{"Open key", "/keys/" + esc(id)}
		}
	case "tenant", "budget":
		// The subject is the tenant's id; its page is by slug, the
		// event's tenant.
		if e.Tenant != "" && p.MayOpen("/tenants") {
			return Link{"Open tenant", "/tenants/" + esc(e.Tenant)}
		}
	case "tool":
		if id != "" && p.MayOpen("/tools") {
			return Link{"Open tool", "/tools/" + esc(id) + "/edit"}
		}
	case "skill":
		if p.MayOpen("/switches") {
			return Link{"Kill switches", "/switches"}
		}
	case "principal":
		if id != "" && p.MayOpen("/audit") {
			return Link{"Their events", "/audit?actor=" + url.QueryEscape(id)}
		}
	case "journey":
		if id != "" && p.MayOpen("/traces") {
			return Link{"Open trace", "/traces/" + esc(id)}
		}
	case "release":
		if p.MayOpen("/releases") {
			return Link{"Releases", "/releases"}
		}
	case "replay":
		if id != "" && p.MayOpen("/releases") {
			return Link{"Open replay", "/releases/replays/" + esc(id)}
		}
	case "runbook":
		rb := eventDetails(e.Details).str("runbook")
		if id != "" && rb != "" && p.MayOpen("/runbooks") {
			return Link{"Open run", "/runbooks/" + esc(rb) + "/runs/" + esc(id)}
		}
	case "alert", "alert_rule":
		if p.MayOpen("/alerts") {
			return Link{"Alerts", "/alerts"}
		}
	}
	return Link{}
}

// actorLink is where the events of the actor who wrote e are listed.
func actorLink(p Page, e audit.Event) string {
	if e.Actor.ID == "" || !p.MayOpen("/audit") {
		return ""
	}
	return "/audit?actor=" + url.QueryEscape(e.Actor.ID)
}

// detailFields lists an event's details as labelled values, sorted by
// key: strings as they are, numbers as written, lists joined, nested
// objects as compact JSON. Keys read as words ("first_seq" → "first seq").
func detailFields(d map[string]any) []Field {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Field, 0, len(keys))
	for _, k := range keys {
		out = append(out, Field{Label: strings.ReplaceAll(k, "_", " "), Value: detailText(k, d[k])})
	}
	return out
}

// detailText is a detail's value as people read it: a status in words, a
// time in the one format pages use, anything else as detailValue has it.
func detailText(k string, v any) string {
	if x, ok := v.(string); ok && x != "" {
		if k == "status" || strings.HasSuffix(k, "_status") {
			return statusWords(x)
		}
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return When(t)
		}
	}
	return detailValue(v)
}

func detailValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case string:
		if x == "" {
			return "—"
		}
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case json.Number:
		return x.String()
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, detailValue(e))
		}
		if len(parts) == 0 {
			return "none"
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		if len(x) == 0 {
			return "none"
		}
		b, err := json.Marshal(x)
		if err != nil {
			return "(unreadable)"
		}
		return string(b)
	}
	return fmt.Sprint(v)
}

// detailsJSON is the details as indented JSON, for the "raw" disclosure.
func detailsJSON(d map[string]any) string {
	if len(d) == 0 {
		return "{}"
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return "(unreadable)"
	}
	return string(b)
}
