package views

import (
	"net/url"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/tenants"
)

// ActionsView is one page of the Actions list: every action in the
// viewer's tenants, whatever its status, newest first.
type ActionsView struct {
	Rows     []approvals.Row
	Tenants  []tenants.Tenant // in scope, for the filter
	Tools    []string         // for the filter
	Filter   ActionFilter
	Errors   FieldErrors // what is wrong with the filter; no rows are listed then
	NextPage string      // older actions
	PrevPage string      // newer actions
	Filtered bool
	Now      time.Time
}

// ActionFilter is the Actions list's filter form, as typed.
type ActionFilter struct {
	Tenant, Status, Tool, Target, Min, Max, From, To string
}

// Query is the filter as query parameters, empty ones left out.
func (f ActionFilter) Query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"tenant": f.Tenant, "status": f.Status, "tool": f.Tool, "target": f.Target,
		"min": f.Min, "max": f.Max, "from": f.From, "to": f.To} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// ActionStatuses are the statuses the Actions list filters by, in the
// order an action moves through them.
var ActionStatuses = []string{
	approvals.StatusPending, approvals.StatusApproved, approvals.StatusExecuting, approvals.StatusExecuted,
	approvals.StatusFailed, approvals.StatusRejected, approvals.StatusExpired, approvals.StatusCancelled,
}
