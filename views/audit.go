package views

import (
	"encoding/json"

	"github.com/wardenhq/warden/audit"
)

// AuditView is one page of the audit trail.
type AuditView struct {
	Events   []audit.Event
	Total    int64
	Tenant   string            // filter, empty for all
	NextPage string            // URL of older events, empty on the last page
	PrevPage string            // URL of newer events, empty on the first page
	Names    map[string]string // principal id → display name
	Verify   *AuditVerifyResult
}

// AuditVerifyResult is the outcome of a chain verification.
type AuditVerifyResult struct {
	OK      bool
	Message string
}

func detailsText(d map[string]any) string {
	if len(d) == 0 {
		return ""
	}
	b, err := json.Marshal(d)
	if err != nil {
		return "(unreadable)"
	}
	return string(b)
}
