package approvals

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/platform/store"
)

// An approver's inbox, for the home page: what waits for them, what they
// approved that still waits for someone else, and how their own recent
// decisions turned out. Reads only; deciding stays in decide.go.
//
//	in, err := approvals.InboxFor(ctx, db.Read(), user.ID, tenantIDs, 10, time.Now())
//	// in.Waiting (in.WaitingTotal in all), in.OnOthers, in.Recent

// Inbox is one approver's to-do list.
type Inbox struct {
	// Waiting are pending actions in scope the approver has not decided
	// and did not ask for themselves, soonest to expire first.
	Waiting      []Row
	WaitingTotal int
	// OnOthers are pending actions the approver approved that still need
	// another approver.
	OnOthers      []Row
	OnOthersTotal int
	// Recent are the approver's own latest decisions with the action's
	// status now, newest first.
	Recent []MyDecision
}

// MyDecision is one decision an approver made and where its action stands.
type MyDecision struct {
	Decision  string // approve or reject
	DecidedAt time.Time
	Action    Row
}

// InboxFor reads the inbox of principal principalID over the tenants
// tenantIDs (nil: every tenant); each list holds at most n rows.
func InboxFor(ctx context.Context, q store.Querier, principalID string, tenantIDs []string, n int, now time.Time) (Inbox, error) {
	var in Inbox
	if tenantIDs != nil && len(tenantIDs) == 0 {
		return in, nil
	}
	scope, scopeArgs := tenantCond(tenantIDs)
	pending := `a.status = ? AND a.expires_at > ?` + scope
	pendingArgs := append([]any{StatusPending, store.FormatTime(now)}, scopeArgs...)
	mine := `EXISTS (SELECT 1 FROM decisions d WHERE d.action_id = a.id AND d.principal_id = ?)`
	// An action someone asked for themselves, or through a key they own,
	// is not theirs to decide (policy.go Check): it is not offered.
	notOwn := `a.requested_by <> ? AND a.key_owner <> ?`

	waitWhere := pending + ` AND NOT ` + mine + ` AND ` + notOwn
	waitArgs := append(append([]any{}, pendingArgs...), principalID, principalID, principalID)
	var err error
	if in.Waiting, in.WaitingTotal, err = inboxRows(ctx, q, waitWhere, waitArgs, "a.expires_at, a.id", n); err != nil {
		return Inbox{}, fmt.Errorf("inbox waiting: %w", err)
	}
	othersWhere := pending + ` AND EXISTS (SELECT 1 FROM decisions d WHERE d.action_id = a.id AND d.principal_id = ? AND d.decision = ?)`
	othersArgs := append(append([]any{}, pendingArgs...), principalID, Approve)
	if in.OnOthers, in.OnOthersTotal, err = inboxRows(ctx, q, othersWhere, othersArgs, "a.expires_at, a.id", n); err != nil {
		return Inbox{}, fmt.Errorf("inbox waiting on others: %w", err)
	}
	if in.Recent, err = recentDecisions(ctx, q, principalID, scope, scopeArgs, n); err != nil {
		return Inbox{}, fmt.Errorf("inbox recent decisions: %w", err)
	}
	return in, nil
}

// tenantCond limits actions a to tenantIDs (nil: no limit).
func tenantCond(tenantIDs []string) (string, []any) {
	if tenantIDs == nil {
		return "", nil
	}
	args := make([]any, 0, len(tenantIDs))
	for _, t := range tenantIDs {
		args = append(args, t)
	}
	return ` AND a.tenant_id IN (?` + strings.Repeat(",?", len(tenantIDs)-1) + `)`, args
}

func inboxRows(ctx context.Context, q store.Querier, where string, args []any, order string, n int) ([]Row, int, error) {
	var total int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM actions a WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	if total == 0 {
		return nil, 0, nil
	}
	out, err := store.Query(ctx, q, scanRow, `SELECT `+prefixColumns(actionColumns)+`, t.slug FROM actions a JOIN tenants t ON t.id = a.tenant_id WHERE `+
		where+` ORDER BY `+order+` LIMIT ?`, append(args, n)...)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

func recentDecisions(ctx context.Context, q store.Querier, principalID, scope string, scopeArgs []any, n int) ([]MyDecision, error) {
	return store.Query(ctx, q, func(s store.Scanner) (MyDecision, error) {
		var d MyDecision
		var at string
		a, err := scan(scanDecision{s, &d.Decision, &at, &d.Action.TenantSlug})
		if err != nil {
			return MyDecision{}, err
		}
		d.Action.Action = a
		d.DecidedAt, _ = time.Parse(time.RFC3339Nano, at)
		return d, nil
	}, `SELECT d.decision, d.created_at, `+prefixColumns(actionColumns)+`, t.slug
		FROM decisions d JOIN actions a ON a.id = d.action_id JOIN tenants t ON t.id = a.tenant_id
		WHERE d.principal_id = ?`+scope+` ORDER BY d.created_at DESC, d.id DESC LIMIT ?`,
		append(append([]any{principalID}, scopeArgs...), n)...)
}

// scanDecision reads a decision's kind and time before the action's
// columns and the tenant slug after them.
type scanDecision struct {
	s        interface{ Scan(...any) error }
	decision *string
	at       *string
	slug     *string
}

func (w scanDecision) Scan(dest ...any) error {
	return w.s.Scan(append(append([]any{w.decision, w.at}, dest...), w.slug)...)
}

// FailedPage is one page of the failed actions of the tenants tenantIDs (nil:
// every tenant), oldest first: on-call's work. The scope is part of the
// query, so a page is always full of the viewer's own tenants' failures.
func FailedPage(ctx context.Context, q store.Querier, tenantIDs []string, page store.Page) (store.Paged[Row], int, error) {
	return List(ctx, q, Filter{TenantIDs: tenantIDs, Status: StatusFailed, Sort: SortAge, Page: page}, time.Now())
}

// JourneyActions maps each journey id of ids that asked for an action to
// that action's id (the newest, should there be more), for lists that
// link a journey to its action.
func JourneyActions(ctx context.Context, q store.Querier, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(ids))
	for _, id := range ids {
		args = append(args, id)
	}
	pairs, err := store.Query(ctx, q, func(s store.Scanner) ([2]string, error) {
		var p [2]string
		err := s.Scan(&p[0], &p[1])
		return p, err
	}, `SELECT journey_id, id FROM actions WHERE journey_id IN (?`+strings.Repeat(",?", len(ids)-1)+`)
		ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("actions of journeys: %w", err)
	}
	for _, p := range pairs {
		out[p[0]] = p[1] // the newest last: ordered by created_at
	}
	return out, nil
}
