package views

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/platform/money"
	"github.com/wardenhq/warden/principals"
	"github.com/wardenhq/warden/tenants"
)

// AuditView is one page of the audit trail.
type AuditView struct {
	Events  []audit.Event
	Names   EventNames       // what the events' ids stand for
	Filter  AuditFilter      // as typed
	Errors  FieldErrors      // what is wrong with the filter; no events are listed then
	Tenants []tenants.Tenant // in scope, for the filter
	// Filtered is true when a filter or a page other than the first is
	// shown, so the page offers to clear it.
	Filtered bool
	NextPage string // URL of older events, empty on the last page
	PrevPage string // URL of newer events, empty on the first page
	// ExportJSONL and ExportCSV download the events the filters select
	// (every page of them).
	ExportJSONL         string
	ExportJSONLManifest string
	ExportCSV           string
	ExportCSVManifest   string
	ChainStatus         ChainStatus
	Verify              *AuditVerifyResult
	Now                 time.Time // for "how long ago"
}

// AuditFilter is the audit page's filter form, as typed.
type AuditFilter struct {
	Tenant, Actor, Verb, SubjectType, SubjectID, From, To string
}

// ChainStatus is what the audit page says about the chain as a whole.
type ChainStatus struct {
	// Head is the newest stored event, as stored: not verified here
	// (Verify chain does that).
	Head audit.Head
	// LastVerifiedCheckpoint is the newest signed checkpoint whose
	// signature verified, or nil when there is none yet.
	LastVerifiedCheckpoint *CheckpointStatus
	// PublicKey verifies checkpoints and export manifests
	// ("ed25519:<base64>"), as `warden audit pubkey` prints it.
	PublicKey string
}

// CheckpointStatus is a signed checkpoint of the chain: the head it vouches
// for and when it was signed.
type CheckpointStatus struct {
	Seq      int64
	Hash     string
	SignedAt time.Time
}

// AuditVerifyResult is the outcome of a chain verification.
type AuditVerifyResult struct {
	OK      bool
	Message string
}

// EventNames are what the ids in audit events stand for, so that an event
// reads as a sentence. An id missing from a map is shown as it is.
type EventNames struct {
	Principals principals.Names  // principal id → display name
	Keys       map[string]string // virtual key id → key name
	Actions    map[string]string // action id → summary
}

// AuditVerbs are the verbs Warden writes, offered as suggestions by the
// verb filter, with the prefixes that select a family.
var AuditVerbs = []string{
	"action.", "action.requested", "action.approval_recorded", "action.approved", "action.rejected",
	"action.expired", "action.cancelled", "action.taken", "action.released", "action.executed", "action.failed", "action.retried",
	"auth.", "auth.login", "auth.login_failed", "auth.login_failed_suppressed", "auth.logout",
	"session.", "session.revoke", "session.revoke_all",
	"tenant.", "tenant.create", "tenant.rename", "tenant.freeze", "tenant.unfreeze", "tenant.retention",
	"tenant.dual_control", "tenant.dual_control_removed", "tenant.dual_control_window", "tenant.frozen_refused",
	"key.", "key.create", "key.revoke", "key.callback_secret_rotated", "key.scopes", "key.rate", "key.expiry", "key.revoked", "key.expired", "key.wrong_secret",
	"budget.set", "tool.", "tool.create", "tool.update", "tool.enable", "tool.disable",
	"model.", "model.create", "model.update", "model.enable", "model.disable", "model.alias", "model.tenant_settings", "model.key_limits",
	"model.allowed_hosts",
	"mcp.", "mcp.server_create", "mcp.server_update", "mcp.server_enable", "mcp.server_disable", "mcp.discover", "mcp.tool_changed",
	"mcp.tool_classify", "mcp.tool_enable", "mcp.tool_disable", "mcp.call",
	"skill.", "skill.disabled", "skill.enabled",
	"release.", "release.published", "release.activated", "release.rolled_back",
	"release.canary_started", "release.canary_rolled_back", "release.promoted", "release.replayed",
	"route.", "route.labelled", "route.label_settings_set",
	"runbook.", "runbook.action", "runbook.publish",
	"alert.", "alert.fired", "alert.resolved", "alert.rule_set", "alert.acknowledged",
	"notify.", "notify.channel_created", "notify.channel_changed", "notify.channel_deleted", "notify.channel_tested",
	"notify.route_added", "notify.route_deleted", "notify.quiet_time_set", "notify.escalation_set", "notify.reminder_set", "notify.claim_time_set",
	"notification.", "notification.delivered", "notification.failed",
	"allow_list.", "allow_list.add", "allow_list.remove",
	"policy.violation", "traces.purged", "traces.purged_range", "audit.", "audit.verify_ok", "audit.verify_failed", "audit.export", "effect.reconciled",
	"job.", "job.retried",
	"change.", "change.requested", "change.approved", "change.rejected", "change.applied", "change.failed", "change.expired",
	"change.approval_refused",
	"break_glass", "break_glass.reviewed",
	"owner.", "owner.set",
}

// trailURL is the decision trail of the action an event is about, or ""
// for an event about something else.
func trailURL(e audit.Event) string {
	if e.Subject.Type != "action" || e.Subject.ID == "" {
		return ""
	}
	return "/audit/actions/" + e.Subject.ID
}

// eventSentence says what an event records in one sentence a person can
// read ("Alice Approver approved action act_… — Refund $45.50 … —
// comment: …"), from its verb and details. A verb it does not know reads
// "actor verb subject", so nothing is ever hidden.
func eventSentence(e audit.Event, n EventNames) string {
	d := eventDetails(e.Details)
	who := actorLabel(e.Actor, n)
	subject := e.Subject.ID
	tenant := e.Tenant
	if tenant == "" {
		tenant = d.str("slug")
	}
	action := func(verbed string) string {
		s := who + " " + verbed + " action " + subject
		if sum := n.Actions[subject]; sum != "" {
			s += " — " + sum
		}
		return s
	}
	switch e.Verb {
	case "auth.login":
		s := who + " signed in"
		if roles := d.list("roles"); len(roles) > 0 {
			s += " as " + strings.Join(roles, ", ")
		}
		if ts := d.list("tenants"); len(ts) > 0 {
			s += " for " + tenantsLabel(ts)
		}
		return s
	case "auth.login_failed":
		return "A sign-in was refused: " + strings.ReplaceAll(subject, "_", " ")
	case "auth.login_failed_suppressed":
		return plural(d.str("count"), "more refused sign-in", "more refused sign-ins") + " from one address, counted here instead of one by one (rate limit)"
	case "auth.logout":
		return who + " signed out"
	case "session.revoke":
		s := who + " revoked session " + subject
		if p := d.str("principal"); p != "" {
			s += " of " + n.Principals.Of(p)
		}
		return s + ": its user must sign in again"
	case "session.revoke_all":
		return who + " revoked all sessions of " + n.Principals.Of(subject) + " (" + plural(d.str("count"), "session", "sessions") + "): they must sign in again"

	case "tenant.create":
		return who + " created tenant " + tenant + quoted(" ", d.str("name"))
	case "tenant.rename":
		return who + " renamed tenant " + tenant + " from " + strconv.Quote(d.str("from")) + " to " + strconv.Quote(d.str("to"))
	case "tenant.freeze":
		return who + " froze tenant " + tenant + ": its agents are refused until it is unfrozen" + comment(" — reason: ", d.str("reason"))
	case "tenant.unfreeze":
		return who + " unfroze tenant " + tenant
	case "tenant.retention":
		return who + " changed how long tenant " + tenant + " keeps traces from " + d.str("from_days") + " to " + d.str("to_days") + " days"
	case "tenant.dual_control":
		s := who + " set tenant " + tenant + "'s dual-control threshold in " + d.str("currency") + " to " + d.minor("to_minor", d.str("currency"))
		if d.has("from_minor") {
			s += " (was " + d.minor("from_minor", d.str("currency")) + ")"
		}
		return s
	case "tenant.dual_control_removed":
		return who + " removed tenant " + tenant + "'s dual-control threshold in " + d.str("currency") + ": two approvers for any amount"
	case "tenant.dual_control_window":
		return who + " changed tenant " + tenant + "'s dual-control window from " + d.str("from_hours") + " to " + d.str("to_hours") + " hours"
	case "tenant.frozen_refused":
		return who + " was refused: tenant " + tenant + " is frozen"
	case "change.requested":
		return who + " asked a second admin to approve: " + d.str("summary") + comment(" — reason: ", d.str("reason"))
	case "change.approved":
		return who + " approved the change: " + d.str("summary") + comment(" — ", d.str("comment"))
	case "change.rejected":
		return who + " rejected the change: " + d.str("summary") + comment(" — reason: ", d.str("comment"))
	case "change.applied":
		return "Approved change applied: " + d.str("summary")
	case "change.failed":
		return "Approved change could not be applied: " + d.str("summary") + comment(" — ", d.str("failure"))
	case "change.expired":
		return "Change expired before a second admin decided it: " + d.str("summary")
	case "change.approval_refused":
		why := strings.ReplaceAll(d.str("reason"), "_", " ")
		if d.str("reason") == "changed_since_asked" {
			why = "what it changes was edited since the change was asked, so it stays pending"
		}
		return who + " tried to approve the change and was refused (" + why + "): " + d.str("summary")
	case "break_glass":
		return who + " broke the glass and applied without a second admin: " + d.str("summary") + comment(" — reason: ", d.str("reason"))
	case "owner.set":
		if d.str("before") == "" {
			return who + " made " + d.str("after") + " the owner of " + subject
		}
		return who + " changed the owner of " + subject + " from " + d.str("before") + " to " + d.str("after")
	case "break_glass.reviewed":
		return who + " reviewed the break-glass change: " + d.str("summary") + comment(" — ", d.str("note"))
	case "job.retried":
		return who + " retried job " + subject + " (" + JobKind(d.str("kind")) + "), which had failed for good"
	case "traces.purged":
		return who + " purged " + d.str("journeys") + " journeys of tenant " + tenant + " older than " + d.day("older_than") + " (kept " + d.str("retention_days") + " days)"

	case "traces.purged_range":
		return who + " purged " + d.str("journeys") + " journeys of tenant " + tenant + " created from " + d.str("from") + " to " + d.str("to") + " (runbook run " + d.str("run") + ", approved in " + d.str("approval") + "); audit events kept"

	case "release.published":
		return who + " published release " + subject + quoted(": ", d.str("note"))
	case "release.activated":
		return who + " activated release " + subject + " for " + d.str("agent") + " in " + d.str("env") + quoted(": ", d.str("reason"))
	case "release.rolled_back":
		return who + " rolled " + d.str("agent") + " in " + d.str("env") + " back to release " + subject + quoted(": ", d.str("reason"))
	case "release.canary_started":
		return who + " started a canary of release " + subject + " for " + d.str("share") + "% of " + d.str("agent") + " in " + d.str("env") + " (floor " + d.str("floor") + ")" + quoted(": ", d.str("reason"))
	case "release.canary_rolled_back":
		return who + " rolled back the canary of release " + subject + " for " + d.str("agent") + " in " + d.str("env") + quoted(": ", d.str("reason"))
	case "release.replayed":
		return who + " replayed release " + ShortDigest(d.str("candidate")) + " over " + d.str("replayed") + " recorded " + d.str("skill") +
			" journeys (replay " + subject + "): " + d.str("agreed") + " routed the same"
	case "release.promoted":
		return who + " promoted release " + subject + " for " + d.str("agent") + " in " + d.str("env") + " after " + d.str("successes") + " of " + d.str("trials") + " journeys succeeded" + quoted(": ", d.str("reason"))

	case "runbook.publish":
		how := " as change " + d.str("change") + " approved"
		if d.str("change") == "" {
			how = " by break glass"
		}
		return who + " published the buttons of runbook " + d.str("runbook") + " (" + d.str("source") + ")" + how + ": " + d.str("labels")
	case "runbook.action":
		return who + " pressed " + quoted("", d.str("label")) + " in runbook " + d.str("runbook") + " (tool " + d.str("tool") + "): " + d.str("outcome") + quoted(" Reason: ", d.str("reason"))
	case "allow_list.add":
		return who + " allowed " + quoted("", d.str("term")) + " to stay readable in tenant " + tenant + "'s redaction"
	case "allow_list.remove":
		return who + " took " + quoted("", d.str("term")) + " off tenant " + tenant + "'s redaction allow-list"
	case "notify.channel_created":
		return who + " added notification channel " + d.str("name") + " (" + d.str("kind") + ")"
	case "notify.channel_changed":
		return who + " changed notification channel " + d.str("name") + " (" + d.str("kind") + ")"
	case "notify.channel_deleted":
		return who + " deleted notification channel " + d.str("name") + " and its routes"
	case "notify.channel_tested":
		if d.str("ok") == "true" {
			return who + " sent a test message to notification channel " + d.str("channel") + ": accepted"
		}
		return who + " sent a test message to notification channel " + d.str("channel") + ": not accepted (" + d.str("error") + ")"
	case "notify.route_added":
		return who + " routed " + d.str("event") + " to notification channel " + d.str("channel")
	case "notify.route_deleted":
		if d.str("event") != "" {
			return who + " stopped routing " + d.str("event") + " to notification channel " + d.str("channel")
		}
		return who + " removed notification route " + subject
	case "notify.quiet_time_set":
		return who + " set the quiet time of alert pages to " + d.str("seconds") + " s"
	case "notify.reminder_set":
		if d.str("minutes") == "0" {
			return who + " turned reminders of pending actions off"
		}
		return who + " set pending actions to be reminded after " + d.str("minutes") + " minutes"
	case "notify.claim_time_set":
		return who + " set an approver's Take to hold for " + d.str("minutes") + " minutes"
	case "notify.escalation_set":
		return who + " set undecided actions to escalate after " + d.str("percent") + "% of their lifetime"
	case "notification.delivered":
		return "Notification " + d.str("message_id") + " (" + d.str("event") + ") delivered to channel " + d.str("channel") + " at attempt " + d.str("attempt")
	case "notification.failed":
		return "Notification " + d.str("message_id") + " (" + d.str("event") + ") to channel " + d.str("channel") + " given up after attempt " + d.str("attempt") + ": " + d.str("error")
	case "alert.fired":
		return "Alert fired: " + d.str("what") + " is " + d.str("value") + d.str("unit") + " (threshold " + d.str("threshold") + d.str("unit") + ")" +
			comment("; runbook ", d.str("runbook")) + comment("; failures ", d.str("codes")) + comment(", mostly ", d.str("fault"))
	case "alert.resolved":
		return "Alert resolved: " + d.str("what") + " is back under " + d.str("threshold") + d.str("unit")
	case "alert.acknowledged":
		return who + " acknowledged the alert " + d.str("what") + comment(" — note: ", d.str("note"))
	case "route.labelled":
		was := ""
		if v := d.str("previous_verdict"); v != "" {
			was = " (was " + v + comment(", should have gone to ", SkillName(d.str("previous_expected"))) + ")"
			if v == "right" {
				was = " (was right)"
			}
		}
		if d.str("verdict") == "right" {
			return who + " labelled the route of journey " + subject + " to " + SkillName(d.str("routed")) + " right" + was
		}
		return who + " labelled the route of journey " + subject + " to " + SkillName(d.str("routed")) + " wrong: it should have gone to " +
			SkillName(d.str("expected")) + was
	case "route.label_settings_set":
		return who + " set labelling: sample " + d.str("sample_percent") + "% of each day's journeys per skill, alert below " +
			d.str("alert_percent") + "% over the last " + d.str("alert_last_n") + " labelled journeys (was " + d.str("previous_sample_percent") +
			"%, " + d.str("previous_alert_percent") + "%, " + d.str("previous_alert_last_n") + ")"
	case "alert.rule_set":
		return who + " set the alert thresholds of skill " + subject + ": failures at " + d.str("failure_percent") + "%, p99 at " +
			d.str("p99_ms") + " ms, over " + d.str("window_minutes") + " minutes once " + d.str("min_journeys") + " journeys ended" +
			" (was " + d.str("previous_failure_percent") + "%, " + d.str("previous_p99_ms") + " ms, " + d.str("previous_window_minutes") + " minutes, " + d.str("previous_min_journeys") + " journeys)"

	case "key.create":
		return who + " created agent key " + keyLabel(d) + " in tenant " + tenant
	case "key.revoke":
		return who + " revoked agent key " + keyLabel(d)
	case "key.scopes":
		s := who + " set the scopes of agent key " + keyLabel(d) + " to " + strings.Join(d.list("scopes"), ", ")
		var parts []string
		if added := d.list("added"); len(added) > 0 {
			parts = append(parts, "added "+strings.Join(added, ", "))
		}
		if removed := d.list("removed"); len(removed) > 0 {
			parts = append(parts, "removed "+strings.Join(removed, ", "))
		}
		if len(parts) > 0 {
			s += " (" + strings.Join(parts, "; ") + ")"
		}
		return s
	case "key.rate":
		return who + " set agent key " + keyLabel(d) + "'s rate limit to " + perMinute(d.str("rate_per_min"), "requests") + ", burst " + d.str("burst") +
			" (was " + perMinute(d.str("previous_rate_per_min"), "requests") + ", burst " + d.str("previous_burst") + ")"
	case "key.expiry":
		if d.str("expires_at") == "" {
			return who + " removed the expiry of agent key " + keyLabel(d) + " (it was to expire " + d.expiry("previous_expires_at") + ")"
		}
		return who + " set agent key " + keyLabel(d) + " to expire " + d.expiry("expires_at") + " (was " + d.expiry("previous_expires_at") + ")"
	case "key.callback_secret_rotated":
		return who + " rotated the callback secret of agent key " + keyLabel(d)
	case "key.revoked":
		return who + " was refused: the key is revoked"
	case "key.expired":
		return who + " was refused: the key has expired"
	case "key.wrong_secret":
		return "A call with agent key " + keyLabel(d) + " was refused: wrong secret"

	case "budget.set":
		s := who + " set tenant " + tenant + "'s budget to " + d.micros("limit_micros") + per(d.str("period")) + ", alert at " + d.str("alert_percent") + "%"
		if d.has("previous_limit_micros") {
			s += " (was " + d.micros("previous_limit_micros") + per(d.str("previous_period")) + ")"
		}
		return s

	case "tool.create":
		state := "switched off"
		if d.bool("enabled") {
			state = "switched on"
		}
		return who + " added tool " + subject + " to the catalog, " + state
	case "tool.update":
		s := who + " changed tool " + subject
		if ch := d.list("changed"); len(ch) > 0 {
			s += ": " + strings.Join(ch, ", ")
		}
		return s
	case "tool.enable":
		if d.bool("tenant_only") {
			return who + " switched tool " + subject + " back on for tenant " + tenant
		}
		return who + " switched tool " + subject + " on"
	case "tool.disable":
		if d.bool("tenant_only") {
			return who + " switched tool " + subject + " off for tenant " + tenant + " only: its calls there are refused" + comment(" — reason: ", d.str("reason"))
		}
		return who + " switched tool " + subject + " off: calls to it are refused" + comment(" — reason: ", d.str("reason"))
	case "model.create":
		s := who + " added model deployment " + subject + " for alias " + d.str("alias")
		if !d.bool("enabled") {
			s += ", switched off"
		}
		return s
	case "model.update":
		s := who + " changed model deployment " + subject
		if ch := d.list("changed"); len(ch) > 0 {
			words := make([]string, len(ch))
			for i, f := range ch {
				words[i] = modelFieldWord(f)
			}
			s += ": " + strings.Join(words, ", ")
		}
		return s
	case "model.enable":
		return who + " switched model deployment " + subject + " on"
	case "model.disable":
		return who + " switched model deployment " + subject + " off: calls to alias " + d.str("alias") + " skip it" + comment(" — reason: ", d.str("reason"))
	case "model.alias":
		s := who + " set model alias " + subject + ": cascade "
		if d.bool("cascade") {
			s += "on"
		} else {
			s += "off"
		}
		if ttl := d.str("cache_ttl_s"); ttl != "" && ttl != "0" {
			return s + ", cache " + ttl + " s"
		}
		return s + ", cache off"
	case "model.allowed_hosts":
		hosts := d.list("hosts")
		if len(hosts) == 0 {
			return who + " cleared the model gateway's allowed internal hosts: deployments must be on public addresses"
		}
		return who + " set the model gateway's allowed internal hosts to " + strings.Join(hosts, ", ")
	case "model.tenant_settings":
		s := who + " set tenant " + tenant + "'s model call traces to keep "
		if d.str("model_content") == "none" {
			s += "metadata only"
		} else {
			s += "redacted content"
		}
		if d.bool("outbound_redaction") {
			return s + ", and its prompts are redacted before they leave Warden"
		}
		return s + ", and its prompts leave Warden as written"
	case "model.key_limits":
		return who + " set agent key " + keyLabel(d) + "'s model limits to " + perMinute(d.str("rpm"), "requests") + " and " + perMinute(d.str("tpm"), "tokens")
	case "mcp.server_create":
		s := who + " added MCP server " + subject + " at " + d.str("url")
		if !d.bool("enabled") {
			s += ", switched off"
		}
		return s
	case "mcp.server_update":
		return who + " changed MCP server " + subject + ": " + strings.Join(d.list("changed"), ", ")
	case "mcp.server_enable":
		return who + " switched MCP server " + subject + " on"
	case "mcp.server_disable":
		return who + " switched MCP server " + subject + " off: calls to its tools are refused" + comment(" — reason: ", d.str("reason"))
	case "mcp.tool_enable":
		return who + " switched MCP tool " + subject + " on"
	case "mcp.tool_disable":
		return who + " switched MCP tool " + subject + " off: calls to it are refused" + comment(" — reason: ", d.str("reason"))
	case "mcp.discover":
		s := who + " discovered the tools of MCP server " + subject + ": " + d.str("listed") + " listed"
		for _, part := range []struct{ key, word string }{{"added", "new"}, {"changed", "changed (back to unclassified)"}, {"gone", "gone"}} {
			if l := d.list(part.key); len(l) > 0 {
				s += "; " + part.word + ": " + strings.Join(l, ", ")
			}
		}
		return s
	case "mcp.tool_changed":
		s := "MCP tool " + subject + " changed its description or input schema, so it is unclassified again"
		if was := d.str("lost_impact"); was != "" {
			s += " (it was " + was + " impact)"
		}
		return s
	case "mcp.tool_classify":
		rev := "irreversible"
		if d.bool("reversible") {
			rev = "reversible"
		}
		return who + " classified MCP tool " + subject + " as " + d.str("impact") + " impact, " + rev
	case "mcp.call":
		switch d.str("outcome") {
		case "forwarded":
			return who + " called MCP tool " + subject + ": forwarded"
		case "refused":
			return who + "'s call of MCP tool " + subject + " was refused"
		}
		return who + "'s call of MCP tool " + subject + " failed upstream"
	case "skill.disabled":
		return who + " switched skill " + subject + " off: journeys for it are refused" + comment(" — reason: ", d.str("reason"))
	case "skill.enabled":
		return who + " switched skill " + subject + " on"

	case "policy.violation":
		s := who + " was refused by policy"
		if tool := d.str("tool"); tool != "" {
			s += " calling tool " + tool
		}
		if r := d.str("reason"); r != "" {
			s += ": " + r
		}
		if code := d.str("code"); code != "" {
			s += " (" + code + ")"
		}
		return s

	case "action.requested":
		s := who + " requested action " + subject
		if orig := d.str("compensates"); orig != "" {
			s = who + " requested action " + subject + " to reverse action " + orig
		}
		if sum := d.str("summary"); sum != "" {
			s += " — " + sum
		} else if sum := n.Actions[subject]; sum != "" {
			s += " — " + sum
		}
		if k := d.str("approvals_required"); k != "" {
			s += " — needs " + plural(k, "approval", "approvals")
		}
		s += comment(" — reason: ", d.str("reason"))
		return s
	case "action.approval_recorded":
		return action("approved") + " — " + d.str("approvals") + " approvals, waiting for another approver" + comment(" — comment: ", d.str("comment"))
	case "action.approved":
		s := action("approved")
		if a := d.str("approvals"); a != "" && a != "1 of 1" {
			s += " — final approval, " + a
		}
		return s + comment(" — comment: ", d.str("comment"))
	case "action.rejected":
		return action("rejected") + comment(" — reason: ", d.str("comment"))
	case "action.expired":
		s := "Action " + subject + " expired"
		if a := d.str("approvals"); a != "" {
			s += " with " + a + " approvals"
		}
		if sum := n.Actions[subject]; sum != "" {
			s += " — " + sum
		}
		return s
	case "action.taken":
		s := who + " took action " + subject + " for review until " + d.str("until")
		if from := d.str("from"); from != "" {
			s += ", taking it over from " + from
		}
		return s + " (advisory: others may still decide it)"
	case "action.released":
		return who + " released action " + subject + ", no longer reviewing it"
	case "action.cancelled":
		return action("withdrew")
	case "action.executed":
		if d.str("reported_by") == "agent" {
			return who + " reported that it executed action " + subject + suffix(" — ", n.Actions[subject])
		}
		return action("executed")
	case "action.retried":
		return who + " retried action " + subject + suffix(" — ", n.Actions[subject]) + " under its own idempotency key" + comment(" — reason: ", d.str("reason"))
	case "action.failed":
		if d.str("reported_by") == "agent" {
			return who + " reported that action " + subject + " failed" + suffix(" — ", n.Actions[subject]) + comment(" — error: ", d.str("error"))
		}
		return "Action " + subject + " failed" + suffix(" — ", n.Actions[subject]) + comment(" — reason: ", d.str("reason"))

	case "audit.verify_ok":
		return who + " verified the audit chain: intact through seq " + d.str("verified_through_seq")
	case "audit.verify_failed":
		return who + " verified the audit chain: broken at seq " + d.str("first_bad_seq")
	case "effect.reconciled":
		if d.str("outcome") == "needs_review" {
			return "The reconciler flagged the effect of action " + subject + " for review" + comment(" — ", d.str("note"))
		}
		return "The reconciler found the effect of action " + subject + " committed at the provider and recorded it"
	case "audit.export":
		return who + " exported " + d.str("rows") + " audit events as " + strings.ToUpper(d.str("format")) + suffix(" — seq ", d.str("first_seq")) + suffix("–", d.str("last_seq"))
	}
	s := who + " " + e.Verb
	if e.Subject.Type != "" || subject != "" {
		s += " " + strings.TrimSpace(e.Subject.Type+" "+subject)
	}
	return s
}

// actorLabel names who caused an event, as the start of a sentence.
func actorLabel(a audit.Actor, n EventNames) string {
	switch a.Type {
	case audit.ActorPrincipal:
		// The name the event recorded comes first: the person as they
		// were named when they acted. Events older than that record
		// none, and are named as the person is named now.
		if a.Name != "" {
			return a.Name
		}
		if a.Email != "" {
			return a.Email
		}
		if name := n.Principals[a.ID]; name != "" {
			return name
		}
		return "Console user " + a.ID
	case audit.ActorKey:
		if name := n.Keys[a.ID]; name != "" {
			return "Agent key " + strconv.Quote(name)
		}
		return "Agent key " + a.ID
	case audit.ActorSystem:
		switch a.ID {
		case "executor":
			return "Warden's executor"
		case "expiry":
			return "Warden's expiry job"
		case "retention":
			return "Warden's retention job"
		case "demo-seed":
			return "Warden's demo data"
		case "cli":
			return "The warden command line"
		}
		return "Warden (" + a.ID + ")"
	case audit.ActorAnonymous:
		return "Someone not signed in"
	}
	return strings.TrimSpace(a.Type + " " + a.ID)
}

func tenantsLabel(ts []string) string {
	for _, t := range ts {
		if t == "*" {
			return "all tenants"
		}
	}
	return strings.Join(ts, ", ")
}

// perMinute is a model limit for people: "60 requests a minute", or "no
// limit on requests" for 0.
func perMinute(n, what string) string {
	if n == "" || n == "0" {
		return "no limit on " + what
	}
	if v, err := strconv.ParseInt(n, 10, 64); err == nil {
		n = groupThousands(v)
	}
	return n + " " + what + " a minute"
}

// groupThousands writes n with commas between groups of three digits
// ("50,000"), the way the console writes counts.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func keyLabel(d eventDetails) string {
	name, prefix := d.str("name"), d.str("prefix")
	switch {
	case name != "" && prefix != "":
		return strconv.Quote(name) + " (" + prefix + "…)"
	case name != "":
		return strconv.Quote(name)
	case prefix != "":
		return prefix + "…"
	}
	return "(unnamed)"
}

func quoted(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + strconv.Quote(s)
}

func comment(label, s string) string {
	if s == "" {
		return ""
	}
	return label + s
}

func suffix(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

func per(period string) string {
	switch period {
	case "day":
		return " a day"
	case "month":
		return " a month"
	case "total":
		return " in total"
	case "":
		return ""
	}
	return " per " + period
}

func plural(n, one, many string) string {
	if n == "1" {
		return n + " " + one
	}
	return n + " " + many
}

// eventDetails reads an event's details as the audit package decodes
// them: numbers as json.Number, lists as []any.
type eventDetails map[string]any

func (d eventDetails) has(k string) bool { _, ok := d[k]; return ok }

func (d eventDetails) str(k string) string {
	switch v := d[k].(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
}

func (d eventDetails) bool(k string) bool { v, _ := d[k].(bool); return v }

func (d eventDetails) int(k string) (int64, bool) {
	switch v := d[k].(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case int64:
		return v, true
	case int:
		return int64(v), true
	}
	return 0, false
}

func (d eventDetails) list(k string) []string {
	vs, _ := d[k].([]any)
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, eventDetails{"v": v}.str("v"))
	}
	return out
}

// micros formats micro-units of US dollars, as budgets keep them.
func (d eventDetails) micros(k string) string {
	n, ok := d.int(k)
	if !ok {
		return d.str(k)
	}
	return Money(n)
}

// minor formats minor units of the currency, as thresholds keep them.
func (d eventDetails) minor(k, currency string) string {
	n, ok := d.int(k)
	if !ok {
		return d.str(k)
	}
	c, err := money.ParseCurrency(currency)
	if err != nil {
		return d.str(k) + " " + currency
	}
	return money.Format(money.Amount{Minor: n, Currency: c})
}

// day formats a stored time as its UTC date.
func (d eventDetails) day(k string) string {
	t, err := time.Parse(time.RFC3339Nano, d.str(k))
	if err != nil {
		return d.str(k)
	}
	return Day(t)
}

// expiry formats a stored key expiry to the minute, in UTC; none is
// "never".
func (d eventDetails) expiry(k string) string {
	if d.str(k) == "" {
		return "never"
	}
	t, err := time.Parse(time.RFC3339Nano, d.str(k))
	if err != nil {
		return d.str(k)
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// modelFieldWord names a model deployment's setting as its form labels it
// ("base URL", "output price"), for the audit sentence of a change.
func modelFieldWord(f string) string {
	switch f {
	case "base_url":
		return "base URL"
	case "upstream_model":
		return "upstream model"
	case "input_micros_per_m":
		return "input price"
	case "output_micros_per_m":
		return "output price"
	case "context_window":
		return "context window"
	case "max_output_tokens":
		return "output cap"
	case "timeout_ms":
		return "timeout"
	case "api_key":
		return "API key"
	}
	return strings.ReplaceAll(f, "_", " ")
}
