package notify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/principals"
)

// Route sends one event of one tenant (or of every tenant) to one channel.
type Route struct {
	ID          string
	TenantID    string // "" for every tenant
	Event       string
	ChannelID   string
	ChannelName string
	// MinAmountMinor, for new pending actions, sends only actions of at
	// least this amount (in the action's minor units); nil for any.
	MinAmountMinor *int64
	// Tools, for new pending actions, sends only actions of these tools;
	// empty for any.
	Tools []string
	// MinSeverity, for alerts, sends only alerts at least this severe; ""
	// for any.
	MinSeverity string
	// Recipients, on a route to an e-mail channel, are whom its messages
	// go to instead of the channel's own recipients: people by e-mail or
	// subject (as they sign in), identity-provider groups
	// ("group:payments"), RecipientAssignee and RecipientOwner.
	Recipients []string
	CreatedAt  time.Time
}

// Recipients a route may name besides people and groups.
const (
	// RecipientAssignee is the approver who took the action and, on a
	// take-over, the one it was taken from (routes of EventAssigned).
	RecipientAssignee = "assignee"
	// RecipientOwner is the owner of the virtual key that proposed the
	// action: the admin who created it (routes of actions' events).
	RecipientOwner = "owner"
	// GroupPrefix marks an identity-provider group: "group:payments".
	GroupPrefix = "group:"
)

// maxRecipients bounds a route's recipients.
const maxRecipients = 20

// ErrRouteNotFound is a route id that names no route.
var ErrRouteNotFound = problem.NotFound("route_not_found", "There is no such route.")

// ValidateRoute returns one message per bad field.
func ValidateRoute(r Route) map[string]string {
	errs := map[string]string{}
	if !slices.Contains(Events, r.Event) {
		errs["event"] = "Choose what the route is for."
	}
	if r.ChannelID == "" {
		errs["channel"] = "Choose a channel."
	}
	if r.MinAmountMinor != nil && *r.MinAmountMinor < 0 {
		errs["min_amount"] = "The amount is zero or more."
	}
	if r.MinSeverity != "" && !slices.Contains(Severities, r.MinSeverity) {
		errs["min_severity"] = "Choose info, warning or critical."
	}
	if len(r.Tools) > 50 {
		errs["tools"] = "List at most 50 tools."
	}
	if msg := validRecipients(r); msg != "" {
		errs["recipients"] = msg
	}
	return errs
}

const routeColumns = `r.id, r.tenant_id, r.event, r.channel_id, c.name, r.min_amount_minor, r.tools, r.min_severity, r.recipients, r.created_at`

func scanRoute(row store.Scanner) (Route, error) {
	var r Route
	var amount sql.NullInt64
	var tools, recipients, created string
	if err := row.Scan(&r.ID, &r.TenantID, &r.Event, &r.ChannelID, &r.ChannelName, &amount, &tools, &r.MinSeverity, &recipients, &created); err != nil {
		return Route{}, err
	}
	if amount.Valid {
		v := amount.Int64
		r.MinAmountMinor = &v
	}
	r.Tools = splitList(tools)
	r.Recipients = splitList(recipients)
	r.CreatedAt, _ = time.Parse(time.RFC3339Nano, created)
	return r, nil
}

// Routes lists every route, by event, tenant and channel.
func Routes(ctx context.Context, q store.Querier) ([]Route, error) {
	out, err := store.Query(ctx, q, scanRoute, `SELECT `+routeColumns+` FROM notify_routes r JOIN notify_channels c ON c.id = r.channel_id
		ORDER BY r.event, r.tenant_id, c.name, r.id`)
	if err != nil {
		return nil, fmt.Errorf("list routes: %w", err)
	}
	return out, nil
}

// routesFor lists the routes of an event that hear tenantID.
func routesFor(ctx context.Context, q store.Querier, event, tenantID string) ([]Route, error) {
	out, err := store.Query(ctx, q, scanRoute, `SELECT `+routeColumns+` FROM notify_routes r JOIN notify_channels c ON c.id = r.channel_id
		WHERE r.event = ? AND (r.tenant_id = '' OR r.tenant_id = ?) ORDER BY c.name, r.id`, event, tenantID)
	if err != nil {
		return nil, fmt.Errorf("routes of %s: %w", event, err)
	}
	return out, nil
}

// AddRoute adds a route with notify.route_added.
func AddRoute(ctx context.Context, db *store.DB, by audit.Actor, r Route, now time.Time) (Route, error) {
	if errs := ValidateRoute(r); len(errs) > 0 {
		return Route{}, &store.ValidationError{Fields: errs}
	}
	r.ID = "rt_" + store.NewID()
	r.CreatedAt = now.UTC()
	err := db.Transact(ctx, func(tx *store.Tx) error {
		var name, kind string
		if err := tx.QueryRowContext(ctx, `SELECT name, kind FROM notify_channels WHERE id = ?`, r.ChannelID).Scan(&name, &kind); err != nil {
			return &store.ValidationError{Fields: map[string]string{"channel": "Choose a channel."}}
		}
		r.ChannelName = name
		if len(r.Recipients) > 0 && kind != Email {
			return &store.ValidationError{Fields: map[string]string{"recipients": "Messages to people go by e-mail: choose an e-mail channel, or name nobody."}}
		}
		people, _, _, _ := r.people()
		for _, p := range people {
			known, err := principals.Known(ctx, tx, p)
			if err != nil {
				return err
			}
			if !known {
				return &store.ValidationError{Fields: map[string]string{"recipients": fmt.Sprintf("Nobody with e-mail address or subject %q has signed in to Warden yet.", clip(p, 80))}}
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO notify_routes (id, tenant_id, event, channel_id, min_amount_minor, tools, min_severity, recipients, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.TenantID, r.Event, r.ChannelID, r.MinAmountMinor, strings.Join(r.Tools, ","),
			r.MinSeverity, strings.Join(r.Recipients, ","), store.FormatTime(r.CreatedAt)); err != nil {
			return fmt.Errorf("add route: %w", err)
		}
		details := map[string]any{"event": r.Event, "channel": name, "tenant_id": r.TenantID}
		if r.MinAmountMinor != nil {
			details["min_amount_minor"] = *r.MinAmountMinor
		}
		if len(r.Tools) > 0 {
			details["tools"] = r.Tools
		}
		if r.MinSeverity != "" {
			details["min_severity"] = r.MinSeverity
		}
		if len(r.Recipients) > 0 {
			// How many, never who: addresses are personal data.
			details["recipients"] = len(r.Recipients)
		}
		_, err := audit.Append(ctx, tx, audit.Event{Actor: by, Verb: "notify.route_added", Subject: audit.Subject{Type: "notify_route", ID: r.ID}, Details: details})
		return err
	})
	return r, err
}

// DeleteRoute deletes a route with notify.route_deleted.
func DeleteRoute(ctx context.Context, db *store.DB, by audit.Actor, id string) error {
	return db.Transact(ctx, func(tx *store.Tx) error {
		// What the route was, for the trail: which event stopped going
		// to which channel, for which tenant (never the people named).
		var event, channel, tenantID string
		err := tx.QueryRowContext(ctx, `SELECT r.event, COALESCE(c.name, ''), r.tenant_id FROM notify_routes r
			LEFT JOIN notify_channels c ON c.id = r.channel_id WHERE r.id = ?`, id).Scan(&event, &channel, &tenantID)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrRouteNotFound
		}
		if err != nil {
			return fmt.Errorf("read route %s: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM notify_routes WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete route %s: %w", id, err)
		}
		_, err = audit.Append(ctx, tx, audit.Event{Actor: by, Verb: "notify.route_deleted", Subject: audit.Subject{Type: "notify_route", ID: id},
			Details: map[string]any{"event": event, "channel": channel, "tenant_id": tenantID}})
		return err
	})
}

func validRecipients(r Route) string {
	if len(r.Recipients) > maxRecipients {
		return fmt.Sprintf("Name at most %d people or groups.", maxRecipients)
	}
	for _, x := range r.Recipients {
		switch {
		case x == RecipientAssignee && r.Event != EventAssigned:
			return "“assignee” is for routes of actions taken by an approver."
		case x == RecipientOwner && (r.Event == EventAlert || r.Event == ""):
			return "“owner” is for routes of actions, not alerts."
		case strings.HasPrefix(x, GroupPrefix) && strings.TrimSpace(strings.TrimPrefix(x, GroupPrefix)) == "":
			return "Name the group after “group:”, such as group:payments."
		case len(x) > 200 || strings.ContainsAny(x, " <>\"\t"):
			return fmt.Sprintf("%q is not an e-mail address, subject or group.", clip(x, 80))
		}
	}
	return ""
}

// people splits a route's recipients into the people and groups it
// names, and whether it names the assignee and the owner.
func (r Route) people() (people, groups []string, assignee, owner bool) {
	for _, x := range r.Recipients {
		switch {
		case x == RecipientAssignee:
			assignee = true
		case x == RecipientOwner:
			owner = true
		case strings.HasPrefix(x, GroupPrefix):
			groups = append(groups, strings.TrimPrefix(x, GroupPrefix))
		default:
			people = append(people, x)
		}
	}
	return people, groups, assignee, owner
}

// hears reports whether a route wants an action of this tool and amount.
func (r Route) hearsAction(tool string, amountMinor *int64) bool {
	if len(r.Tools) > 0 && !slices.Contains(r.Tools, tool) {
		return false
	}
	if r.MinAmountMinor != nil && (amountMinor == nil || *amountMinor < *r.MinAmountMinor) {
		return false
	}
	return true
}

// hearsAlert reports whether a route wants an alert of this severity.
func (r Route) hearsAlert(severity string) bool {
	return r.MinSeverity == "" || severityRank(severity) >= severityRank(r.MinSeverity)
}
