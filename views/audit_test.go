package views

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/principals"
)

// sentenceEvent is an event as the audit package returns it: details
// decoded from JSON with numbers as json.Number.
func sentenceEvent(t *testing.T, actor audit.Actor, tenant, verb string, subject audit.Subject, detailsJSON string) audit.Event {
	t.Helper()
	var d map[string]any
	if detailsJSON != "" {
		dec := json.NewDecoder(strings.NewReader(detailsJSON))
		dec.UseNumber()
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("details %s: %v", detailsJSON, err)
		}
	}
	return audit.Event{Actor: actor, Tenant: tenant, Verb: verb, Subject: subject, Details: d}
}

func TestEventSentence(t *testing.T) {
	alice := audit.Actor{Type: audit.ActorPrincipal, ID: "p-alice"}
	bot := audit.Actor{Type: audit.ActorKey, ID: "key_1"}
	executor := audit.Actor{Type: audit.ActorSystem, ID: "executor"}
	act := audit.Subject{Type: "action", ID: "act_01"}
	tenant := audit.Subject{Type: "tenant", ID: "t_01"}
	key := audit.Subject{Type: "key", ID: "key_1"}
	tool := audit.Subject{Type: "tool", ID: "issue_refund"}
	names := EventNames{
		Principals: principals.Names{"p-alice": "Alice Approver"},
		Keys:       map[string]string{"key_1": "refund-bot"},
		Actions:    map[string]string{"act_01": "Refund $2,400.00 to account ••9182"},
	}
	tests := []struct {
		name    string
		actor   audit.Actor
		tenant  string
		verb    string
		subject audit.Subject
		details string
		want    string
	}{
		{"login", alice, "", "auth.login", audit.Subject{Type: "principal", ID: "p-alice"}, `{"roles":["approver"],"tenants":["acme"]}`,
			"Alice Approver signed in as approver for acme"},
		{"login all tenants", alice, "", "auth.login", audit.Subject{Type: "principal", ID: "p-alice"}, `{"roles":["admin","auditor"],"tenants":["*"]}`,
			"Alice Approver signed in as admin, auditor for all tenants"},
		{"channel created", alice, "", "notify.channel_created", audit.Subject{Type: "notify_channel", ID: "ch_1"}, `{"name":"ops","kind":"slack","url":"https://hooks.slack.com"}`,
			"Alice Approver added notification channel ops (slack)"},
		{"channel changed", alice, "", "notify.channel_changed", audit.Subject{Type: "notify_channel", ID: "ch_1"}, `{"name":"ops","kind":"slack"}`,
			"Alice Approver changed notification channel ops (slack)"},
		{"channel deleted", alice, "", "notify.channel_deleted", audit.Subject{Type: "notify_channel", ID: "ch_1"}, `{"name":"ops","kind":"slack"}`,
			"Alice Approver deleted notification channel ops and its routes"},
		{"channel tested", alice, "", "notify.channel_tested", audit.Subject{Type: "notify_channel", ID: "ch_1"}, `{"channel":"ops","ok":false,"error":"hooks.slack.com answered 404 Not Found"}`,
			"Alice Approver sent a test message to notification channel ops: not accepted (hooks.slack.com answered 404 Not Found)"},
		{"route added", alice, "", "notify.route_added", audit.Subject{Type: "notify_route", ID: "rt_1"}, `{"event":"action.pending","channel":"ops"}`,
			"Alice Approver routed action.pending to notification channel ops"},
		{"route deleted", alice, "", "notify.route_deleted", audit.Subject{Type: "notify_route", ID: "rt_1"}, `{}`,
			"Alice Approver removed notification route rt_1"},
		{"route deleted, with what it was", alice, "", "notify.route_deleted", audit.Subject{Type: "notify_route", ID: "rt_1"}, `{"event":"action.pending","channel":"ops","tenant_id":""}`,
			"Alice Approver stopped routing action.pending to notification channel ops"},
		{"quiet time", alice, "", "notify.quiet_time_set", audit.Subject{Type: "notify_settings", ID: "quiet_time"}, `{"seconds":600}`,
			"Alice Approver set the quiet time of alert pages to 600 s"},
		{"reminder", alice, "", "notify.reminder_set", audit.Subject{Type: "notify_settings", ID: "reminder"}, `{"minutes":30}`,
			"Alice Approver set pending actions to be reminded after 30 minutes"},
		{"escalation", alice, "", "notify.escalation_set", audit.Subject{Type: "notify_settings", ID: "escalation"}, `{"percent":50}`,
			"Alice Approver set undecided actions to escalate after 50% of their lifetime"},
		{"notification delivered", audit.Actor{Type: audit.ActorSystem, ID: "notify"}, "acme", "notification.delivered", audit.Subject{Type: "notification", ID: "msg_1"},
			`{"channel":"ops","event":"action.pending","message_id":"msg_1","attempt":2}`,
			"Notification msg_1 (action.pending) delivered to channel ops at attempt 2"},
		{"notification failed", audit.Actor{Type: audit.ActorSystem, ID: "notify"}, "acme", "notification.failed", audit.Subject{Type: "notification", ID: "msg_1"},
			`{"channel":"ops","event":"alert","message_id":"msg_1","attempt":140,"error":"no answer"}`,
			"Notification msg_1 (alert) to channel ops given up after attempt 140: no answer"},
		{"alert fired", audit.Actor{Type: audit.ActorSystem, ID: "alerts"}, "", "alert.fired", audit.Subject{Type: "alert", ID: "a1"},
			`{"what":"Failure rate of skill refunds","unit":"%","value":40,"threshold":20,"runbook":"tool-provider-outage"}`,
			"Alert fired: Failure rate of skill refunds is 40% (threshold 20%); runbook tool-provider-outage"},
		{"alert fired with its cause", audit.Actor{Type: audit.ActorSystem, ID: "alerts"}, "", "alert.fired", audit.Subject{Type: "alert", ID: "a1"},
			`{"what":"Failure rate of skill order_status","unit":"%","value":63,"threshold":20,"codes":"incomplete_request 14","fault":"the agent's requests"}`,
			"Alert fired: Failure rate of skill order_status is 63% (threshold 20%); failures incomplete_request 14, mostly the agent's requests"},
		{"alert acknowledged", alice, "", "alert.acknowledged", audit.Subject{Type: "alert", ID: "a1"},
			`{"what":"Failure rate of skill order_status","note":"calling the agent's owner"}`,
			"Alice Approver acknowledged the alert Failure rate of skill order_status — note: calling the agent's owner"},
		{"tool off for one tenant", alice, "acme", "tool.disable", audit.Subject{Type: "tool", ID: "lookup_order"},
			`{"enabled":false,"tenant_only":true,"reason":"provider down"}`,
			"Alice Approver switched tool lookup_order off for tenant acme only: its calls there are refused — reason: provider down"},
		{"alert resolved", audit.Actor{Type: audit.ActorSystem, ID: "alerts"}, "", "alert.resolved", audit.Subject{Type: "alert", ID: "a1"},
			`{"what":"p99 latency of skill orders","unit":" ms","value":12000,"threshold":10000}`,
			"Alert resolved: p99 latency of skill orders is back under 10000 ms"},
		{"alert rule set", alice, "", "alert.rule_set", audit.Subject{Type: "alert_rule", ID: "refunds"},
			`{"failure_percent":5,"p99_ms":2000,"window_minutes":10,"min_journeys":5,"previous_failure_percent":20,"previous_p99_ms":10000,"previous_window_minutes":15,"previous_min_journeys":20}`,
			"Alice Approver set the alert thresholds of skill refunds: failures at 5%, p99 at 2000 ms, over 10 minutes once 5 journeys ended (was 20%, 10000 ms, 15 minutes, 20 journeys)"},
		{"login refused", audit.Actor{Type: audit.ActorAnonymous, ID: "-"}, "", "auth.login_failed", audit.Subject{Type: "login", ID: "state_mismatch"}, `{}`,
			"A sign-in was refused: state mismatch"},
		{"logout", alice, "", "auth.logout", audit.Subject{Type: "principal", ID: "p-alice"}, `{}`,
			"Alice Approver signed out"},
		{"refusals summed up", audit.Actor{Type: audit.ActorAnonymous, ID: "-"}, "", "auth.login_failed_suppressed", audit.Subject{Type: "login", ID: "rate_limited"}, `{"count":42}`,
			"42 more refused sign-ins from one address, counted here instead of one by one (rate limit)"},
		{"session revoked", alice, "", "session.revoke", audit.Subject{Type: "session", ID: "s_01"}, `{"principal":"p-alice"}`,
			"Alice Approver revoked session s_01 of Alice Approver: its user must sign in again"},
		{"all sessions revoked", alice, "", "session.revoke_all", audit.Subject{Type: "principal", ID: "p-alice"}, `{"count":1}`,
			"Alice Approver revoked all sessions of Alice Approver (1 session): they must sign in again"},

		{"tenant create", alice, "acme", "tenant.create", tenant, `{"slug":"acme","name":"Acme Corp"}`,
			`Alice Approver created tenant acme "Acme Corp"`},
		{"demo tenant", audit.Actor{Type: audit.ActorSystem, ID: "demo-seed"}, "acme", "tenant.create", tenant, `{"slug":"acme","name":"Acme","reason":"development mode demo data"}`,
			`Warden's demo data created tenant acme "Acme"`},
		{"tenant rename", alice, "acme", "tenant.rename", tenant, `{"from":"Acme","to":"Acme Corp"}`,
			`Alice Approver renamed tenant acme from "Acme" to "Acme Corp"`},
		{"freeze", alice, "acme", "tenant.freeze", tenant, `{"frozen":true}`,
			"Alice Approver froze tenant acme: its agents are refused until it is unfrozen"},
		{"freeze with a reason", alice, "acme", "tenant.freeze", tenant, `{"frozen":true,"reason":"INC-12: leaked key"}`,
			"Alice Approver froze tenant acme: its agents are refused until it is unfrozen — reason: INC-12: leaked key"},
		{"unfreeze", alice, "acme", "tenant.unfreeze", tenant, `{"frozen":false}`,
			"Alice Approver unfroze tenant acme"},
		{"retention", alice, "acme", "tenant.retention", tenant, `{"from_days":30,"to_days":7}`,
			"Alice Approver changed how long tenant acme keeps traces from 30 to 7 days"},
		{"dual control", alice, "acme", "tenant.dual_control", tenant, `{"currency":"USD","to_minor":100000,"from_minor":50000}`,
			"Alice Approver set tenant acme's dual-control threshold in USD to $1,000.00 (was $500.00)"},
		{"first dual control", alice, "acme", "tenant.dual_control", tenant, `{"currency":"EUR","to_minor":0}`,
			"Alice Approver set tenant acme's dual-control threshold in EUR to €0.00"},
		{"dual control removed", alice, "acme", "tenant.dual_control_removed", tenant, `{"currency":"USD"}`,
			"Alice Approver removed tenant acme's dual-control threshold in USD: two approvers for any amount"},
		{"dual control window", alice, "acme", "tenant.dual_control_window", tenant, `{"from_hours":24,"to_hours":48}`,
			"Alice Approver changed tenant acme's dual-control window from 24 to 48 hours"},
		{"frozen refused", bot, "acme", "tenant.frozen_refused", key, `{"prefix":"wk_ab12"}`,
			`Agent key "refund-bot" was refused: tenant acme is frozen`},
		{"job retried", alice, "", "job.retried", audit.Subject{Type: "job", ID: "42"}, `{"kind":"execute_action"}`,
			"Alice Approver retried job 42 (Execute an approved action), which had failed for good"},
		{"traces purged", audit.Actor{Type: audit.ActorSystem, ID: "retention"}, "acme", "traces.purged", tenant, `{"journeys":12,"older_than":"2026-02-01T00:00:00Z","retention_days":30}`,
			"Warden's retention job purged 12 journeys of tenant acme older than 2026-02-01 (kept 30 days)"},
		{"traces purged by a runbook", alice, "acme", "traces.purged_range", tenant, `{"journeys":3,"from":"2026-11-01T00:00:00Z","to":"2026-11-02T00:00:00Z","run":"run1","approval":"act_1"}`,
			"Alice Approver purged 3 journeys of tenant acme created from 2026-11-01T00:00:00Z to 2026-11-02T00:00:00Z (runbook run run1, approved in act_1); audit events kept"},

		{"key create", alice, "acme", "key.create", key, `{"name":"refund-bot","prefix":"wk_ab12","scopes":["skill:refunds"]}`,
			`Alice Approver created agent key "refund-bot" (wk_ab12…) in tenant acme`},
		{"key create by the CLI", audit.Actor{Type: audit.ActorSystem, ID: "cli"}, "acme", "key.create", key, `{"name":"ops"}`,
			`The warden command line created agent key "ops" in tenant acme`},
		{"key revoke", alice, "acme", "key.revoke", key, `{"name":"refund-bot","prefix":"wk_ab12"}`,
			`Alice Approver revoked agent key "refund-bot" (wk_ab12…)`},
		{"key scopes", alice, "acme", "key.scopes", key, `{"name":"refund-bot","prefix":"wk_ab12","before":["tool:lookup_order","tool:x"],"scopes":["tool:*"],"added":["tool:*"],"removed":["tool:lookup_order","tool:x"]}`,
			`Alice Approver set the scopes of agent key "refund-bot" (wk_ab12…) to tool:* (added tool:*; removed tool:lookup_order, tool:x)`},
		{"key rate", alice, "acme", "key.rate", key, `{"name":"refund-bot","prefix":"wk_ab12","rate_per_min":1200,"burst":20,"previous_rate_per_min":600,"previous_burst":60}`,
			`Alice Approver set agent key "refund-bot" (wk_ab12…)'s rate limit to 1,200 requests a minute, burst 20 (was 600 requests a minute, burst 60)`},
		{"key expiry set", alice, "acme", "key.expiry", key, `{"name":"refund-bot","prefix":"wk_ab12","expires_at":"2027-01-31T00:00:00.000000000Z","previous_expires_at":null}`,
			`Alice Approver set agent key "refund-bot" (wk_ab12…) to expire 2027-01-31 00:00 UTC (was never)`},
		{"key expiry earlier", alice, "acme", "key.expiry", key, `{"name":"refund-bot","prefix":"wk_ab12","expires_at":"2027-01-01T00:00:00.000000000Z","previous_expires_at":"2027-01-31T00:00:00.000000000Z"}`,
			`Alice Approver set agent key "refund-bot" (wk_ab12…) to expire 2027-01-01 00:00 UTC (was 2027-01-31 00:00 UTC)`},
		{"key expiry removed", alice, "acme", "key.expiry", key, `{"name":"refund-bot","prefix":"wk_ab12","expires_at":null,"previous_expires_at":"2027-01-31T00:00:00.000000000Z"}`,
			`Alice Approver removed the expiry of agent key "refund-bot" (wk_ab12…) (it was to expire 2027-01-31 00:00 UTC)`},
		{"callback secret", alice, "acme", "key.callback_secret_rotated", key, `{"name":"refund-bot","prefix":"wk_ab12"}`,
			`Alice Approver rotated the callback secret of agent key "refund-bot" (wk_ab12…)`},
		{"revoked key", bot, "acme", "key.revoked", key, `{"prefix":"wk_ab12"}`,
			`Agent key "refund-bot" was refused: the key is revoked`},
		{"expired key", bot, "acme", "key.expired", key, `{"prefix":"wk_ab12"}`,
			`Agent key "refund-bot" was refused: the key has expired`},
		{"wrong secret", audit.Actor{Type: audit.ActorKey, ID: "key_9"}, "acme", "key.wrong_secret", key, `{"prefix":"wk_ab12"}`,
			"A call with agent key wk_ab12… was refused: wrong secret"},

		{"mcp server create", alice, "", "mcp.server_create", audit.Subject{Type: "mcp_server", ID: "crm"}, `{"url":"https://mcp.example.com/mcp","enabled":true}`,
			"Alice Approver added MCP server crm at https://mcp.example.com/mcp"},
		{"mcp server update", alice, "", "mcp.server_update", audit.Subject{Type: "mcp_server", ID: "crm"}, `{"changed":["url","token"]}`,
			"Alice Approver changed MCP server crm: url, token"},
		{"mcp server off", alice, "", "mcp.server_disable", audit.Subject{Type: "mcp_server", ID: "crm"}, `{"enabled":false}`,
			"Alice Approver switched MCP server crm off: calls to its tools are refused"},
		{"mcp server off with a reason", alice, "", "mcp.server_disable", audit.Subject{Type: "mcp_server", ID: "crm"}, `{"enabled":false,"reason":"INC-4"}`,
			"Alice Approver switched MCP server crm off: calls to its tools are refused — reason: INC-4"},
		{"mcp tool off", alice, "", "mcp.tool_disable", audit.Subject{Type: "mcp_tool", ID: "crm/b"}, `{"enabled":false,"reason":"INC-5"}`,
			"Alice Approver switched MCP tool crm/b off: calls to it are refused — reason: INC-5"},
		{"mcp tool on", alice, "", "mcp.tool_enable", audit.Subject{Type: "mcp_tool", ID: "crm/b"}, `{"enabled":true}`,
			"Alice Approver switched MCP tool crm/b on"},
		{"mcp server on", alice, "", "mcp.server_enable", audit.Subject{Type: "mcp_server", ID: "crm"}, `{"enabled":true}`,
			"Alice Approver switched MCP server crm on"},
		{"mcp discover", alice, "", "mcp.discover", audit.Subject{Type: "mcp_server", ID: "crm"}, `{"listed":2,"added":["a"],"changed":["b"],"gone":null}`,
			"Alice Approver discovered the tools of MCP server crm: 2 listed; new: a; changed (back to unclassified): b"},
		{"mcp tool changed", alice, "", "mcp.tool_changed", audit.Subject{Type: "mcp_tool", ID: "crm/b"}, `{"lost_impact":"low"}`,
			"MCP tool crm/b changed its description or input schema, so it is unclassified again (it was low impact)"},
		{"mcp classify", alice, "", "mcp.tool_classify", audit.Subject{Type: "mcp_tool", ID: "crm/b"}, `{"impact":"high","reversible":false}`,
			"Alice Approver classified MCP tool crm/b as high impact, irreversible"},
		{"mcp call", bot, "acme", "mcp.call", audit.Subject{Type: "mcp_tool", ID: "crm/b"}, `{"outcome":"forwarded"}`,
			`Agent key "refund-bot" called MCP tool crm/b: forwarded`},
		{"mcp call refused", bot, "acme", "mcp.call", audit.Subject{Type: "mcp_tool", ID: "crm/b"}, `{"outcome":"refused"}`,
			`Agent key "refund-bot"'s call of MCP tool crm/b was refused`},

		{"budget", alice, "acme", "budget.set", audit.Subject{Type: "budget", ID: "t_01"}, `{"period":"month","limit_micros":500000000,"alert_percent":80}`,
			"Alice Approver set tenant acme's budget to $500.00 a month, alert at 80%"},
		{"budget change", alice, "acme", "budget.set", audit.Subject{Type: "budget", ID: "t_01"},
			`{"period":"day","limit_micros":25000000,"alert_percent":90,"previous_period":"month","previous_limit_micros":500000000,"previous_alert_percent":80}`,
			"Alice Approver set tenant acme's budget to $25.00 a day, alert at 90% (was $500.00 a month)"},

		{"tool create", alice, "", "tool.create", tool, `{"enabled":true}`,
			"Alice Approver added tool issue_refund to the catalog, switched on"},
		{"model create", alice, "", "model.create", audit.Subject{Type: "model", ID: "gpt-east"}, `{"alias":"chat","enabled":true}`,
			"Alice Approver added model deployment gpt-east for alias chat"},
		{"model create off", alice, "", "model.create", audit.Subject{Type: "model", ID: "gpt-east"}, `{"alias":"chat","enabled":false}`,
			"Alice Approver added model deployment gpt-east for alias chat, switched off"},
		{"model update", alice, "", "model.update", audit.Subject{Type: "model", ID: "gpt-east"}, `{"changed":["priority","api_key"]}`,
			"Alice Approver changed model deployment gpt-east: priority, API key"},
		{"model update in words", alice, "", "model.update", audit.Subject{Type: "model", ID: "gpt-east"}, `{"changed":["base_url","upstream_model","input_micros_per_m","max_output_tokens","timeout_ms"]}`,
			"Alice Approver changed model deployment gpt-east: base URL, upstream model, input price, output cap, timeout"},
		{"model on", alice, "", "model.enable", audit.Subject{Type: "model", ID: "gpt-east"}, `{"alias":"chat","enabled":true}`,
			"Alice Approver switched model deployment gpt-east on"},
		{"model alias", alice, "", "model.alias", audit.Subject{Type: "model_alias", ID: "chat"}, `{"cascade":true,"cache_ttl_s":600}`,
			"Alice Approver set model alias chat: cascade on, cache 600 s"},
		{"model alias off", alice, "", "model.alias", audit.Subject{Type: "model_alias", ID: "chat"}, `{"cascade":false,"cache_ttl_s":0}`,
			"Alice Approver set model alias chat: cascade off, cache off"},
		{"model allowed hosts", alice, "", "model.allowed_hosts", audit.Subject{Type: "model_gateway", ID: "allowed_hosts"}, `{"hosts":["10.0.0.5","llm.corp"],"added":["llm.corp"],"removed":null}`,
			"Alice Approver set the model gateway's allowed internal hosts to 10.0.0.5, llm.corp"},
		{"model allowed hosts cleared", alice, "", "model.allowed_hosts", audit.Subject{Type: "model_gateway", ID: "allowed_hosts"}, `{"hosts":[],"added":null,"removed":["llm.corp"]}`,
			"Alice Approver cleared the model gateway's allowed internal hosts: deployments must be on public addresses"},
		{"model tenant settings", alice, "acme", "model.tenant_settings", tenant, `{"model_content":"none","outbound_redaction":true}`,
			"Alice Approver set tenant acme's model call traces to keep metadata only, and its prompts are redacted before they leave Warden"},
		{"model tenant settings default", alice, "acme", "model.tenant_settings", tenant, `{"model_content":"redacted","outbound_redaction":false}`,
			"Alice Approver set tenant acme's model call traces to keep redacted content, and its prompts leave Warden as written"},
		{"model key limits", alice, "acme", "model.key_limits", key, `{"name":"refund-bot","prefix":"wk_ab12","rpm":60,"tpm":0}`,
			`Alice Approver set agent key "refund-bot" (wk_ab12…)'s model limits to 60 requests a minute and no limit on tokens`},
		{"model key limits in thousands", alice, "acme", "model.key_limits", key, `{"name":"refund-bot","prefix":"wk_ab12","rpm":1200,"tpm":50000}`,
			`Alice Approver set agent key "refund-bot" (wk_ab12…)'s model limits to 1,200 requests a minute and 50,000 tokens a minute`},
		{"model off", alice, "", "model.disable", audit.Subject{Type: "model", ID: "gpt-east"}, `{"alias":"chat","enabled":false}`,
			"Alice Approver switched model deployment gpt-east off: calls to alias chat skip it"},
		{"model off with a reason", alice, "", "model.disable", audit.Subject{Type: "model", ID: "gpt-east"}, `{"alias":"chat","enabled":false,"reason":"INC-12"}`,
			"Alice Approver switched model deployment gpt-east off: calls to alias chat skip it — reason: INC-12"},
		{"tool update", alice, "", "tool.update", tool, `{"changed":["timeout","max_attempts"]}`,
			"Alice Approver changed tool issue_refund: timeout, max_attempts"},
		{"tool on", alice, "", "tool.enable", tool, `{"enabled":true}`,
			"Alice Approver switched tool issue_refund on"},
		{"release published", alice, "", "release.published", audit.Subject{Type: "release", ID: "sha256:ab12"}, `{"note":"shorter prompt"}`,
			`Alice Approver published release sha256:ab12: "shorter prompt"`},
		{"release activated", alice, "", "release.activated", audit.Subject{Type: "release", ID: "sha256:ab12"}, `{"agent":"support-agent","env":"production","digest":"sha256:ab12","reason":""}`,
			`Alice Approver activated release sha256:ab12 for support-agent in production`},
		{"runbook action", alice, "", "runbook.action", audit.Subject{Type: "runbook", ID: "run_1"}, `{"runbook":"tool-provider-outage","action":"off","label":"Switch off issue_refund","tool":"switch_tool","status":"done","outcome":"Switched the tool issue_refund off.","reason":"provider down"}`,
			`Alice Approver pressed "Switch off issue_refund" in runbook tool-provider-outage (tool switch_tool): Switched the tool issue_refund off. Reason: "provider down"`},
		{"runbook buttons published", alice, "", "runbook.publish", audit.Subject{Type: "runbook", ID: "disk-full"}, `{"runbook":"disk-full","title":"Disk full","source":"disk-full.md","change":"chg_1","labels":"Switch off issue_refund, Switch on issue_refund","buttons":[]}`,
			`Alice Approver published the buttons of runbook disk-full (disk-full.md) as change chg_1 approved: Switch off issue_refund, Switch on issue_refund`},
		{"runbook buttons published by break glass", alice, "", "runbook.publish", audit.Subject{Type: "runbook", ID: "disk-full"}, `{"runbook":"disk-full","source":"disk-full.md","change":"","labels":"Switch off issue_refund"}`,
			`Alice Approver published the buttons of runbook disk-full (disk-full.md) by break glass: Switch off issue_refund`},
		{"release rolled back", alice, "", "release.rolled_back", audit.Subject{Type: "release", ID: "sha256:ab12"}, `{"agent":"support-agent","env":"production","digest":"sha256:ab12","reason":"refunds misrouted"}`,
			`Alice Approver rolled support-agent in production back to release sha256:ab12: "refunds misrouted"`},
		{"canary started", alice, "", "release.canary_started", audit.Subject{Type: "release", ID: "sha256:cd34"}, `{"agent":"support-agent","env":"production","active":"sha256:ab12","share":10,"floor":0.9,"reason":"shorter prompt"}`,
			`Alice Approver started a canary of release sha256:cd34 for 10% of support-agent in production (floor 0.9): "shorter prompt"`},
		{"canary rolled back by the gate", audit.Actor{Type: audit.ActorSystem, ID: "canary-gate"}, "", "release.canary_rolled_back", audit.Subject{Type: "release", ID: "sha256:cd34"}, `{"agent":"support-agent","env":"production","reason":"automatic: 1 critical failure(s)"}`,
			`Warden (canary-gate) rolled back the canary of release sha256:cd34 for support-agent in production: "automatic: 1 critical failure(s)"`},
		{"replayed", alice, "", "release.replayed", audit.Subject{Type: "replay", ID: "rpl_01"}, `{"candidate":"sha256:cd34cd34cd34cd34","skill":"refunds","replayed":20,"agreed":19}`,
			"Alice Approver replayed release cd34cd34cd34 over 20 recorded refunds journeys (replay rpl_01): 19 routed the same"},
		{"canary promoted", alice, "", "release.promoted", audit.Subject{Type: "release", ID: "sha256:cd34"}, `{"agent":"support-agent","env":"production","trials":100,"successes":98,"reason":"gate clear"}`,
			`Alice Approver promoted release sha256:cd34 for support-agent in production after 98 of 100 journeys succeeded: "gate clear"`},
		{"tool off", alice, "", "tool.disable", tool, `{"enabled":false}`,
			"Alice Approver switched tool issue_refund off: calls to it are refused"},
		{"tool off with a reason", alice, "", "tool.disable", tool, `{"enabled":false,"reason":"INC-9: paid twice"}`,
			"Alice Approver switched tool issue_refund off: calls to it are refused — reason: INC-9: paid twice"},
		{"skill off", alice, "", "skill.disabled", audit.Subject{Type: "skill", ID: "refunds"}, `{"enabled":false,"reason":"INC-10"}`,
			"Alice Approver switched skill refunds off: journeys for it are refused — reason: INC-10"},
		{"skill on", alice, "", "skill.enabled", audit.Subject{Type: "skill", ID: "refunds"}, `{"enabled":true}`,
			"Alice Approver switched skill refunds on"},
		{"policy violation without a tool", bot, "acme", "policy.violation", audit.Subject{Type: "journey", ID: "jrn_2"}, `{"code":"skill_disabled","tool":"","skill":"refunds","reason":"skill refunds is switched off"}`,
			`Agent key "refund-bot" was refused by policy: skill refunds is switched off (skill_disabled)`},

		{"policy violation", bot, "acme", "policy.violation", audit.Subject{Type: "journey", ID: "jrn_1"}, `{"code":"tool_not_allowed","tool":"delete_account","reason":"the key may not call it"}`,
			`Agent key "refund-bot" was refused by policy calling tool delete_account: the key may not call it (tool_not_allowed)`},

		{"requested", bot, "acme", "action.requested", act, `{"summary":"Refund $2,400.00 to account ••9182","approvals_required":2,"rule":"refunds over $500"}`,
			`Agent key "refund-bot" requested action act_01 — Refund $2,400.00 to account ••9182 — needs 2 approvals`},
		{"reversal requested", alice, "acme", "action.requested", audit.Subject{Type: "action", ID: "act_02"}, `{"summary":"Reverse: Refund $45.50","compensates":"act_01","approvals_required":1}`,
			"Alice Approver requested action act_02 to reverse action act_01 — Reverse: Refund $45.50 — needs 1 approval"},
		{"reversal requested with a reason", alice, "acme", "action.requested", audit.Subject{Type: "action", ID: "act_02"}, `{"summary":"Reverse: Refund $45.50","compensates":"act_01","approvals_required":1,"reason":"goods returned"}`,
			"Alice Approver requested action act_02 to reverse action act_01 — Reverse: Refund $45.50 — needs 1 approval — reason: goods returned"},
		{"approval recorded", alice, "acme", "action.approval_recorded", act, `{"approvals":"1 of 2","comment":"return slip checked"}`,
			"Alice Approver approved action act_01 — Refund $2,400.00 to account ••9182 — 1 of 2 approvals, waiting for another approver — comment: return slip checked"},
		{"approved", alice, "acme", "action.approved", act, `{"approvals":"1 of 1","comment":"ok to refund"}`,
			"Alice Approver approved action act_01 — Refund $2,400.00 to account ••9182 — comment: ok to refund"},
		{"final approval", alice, "acme", "action.approved", act, `{"approvals":"2 of 2","comment":""}`,
			"Alice Approver approved action act_01 — Refund $2,400.00 to account ••9182 — final approval, 2 of 2"},
		{"rejected", alice, "acme", "action.rejected", act, `{"approvals":"0 of 1","comment":"charged once only"}`,
			"Alice Approver rejected action act_01 — Refund $2,400.00 to account ••9182 — reason: charged once only"},
		{"taken", alice, "acme", "action.taken", act, `{"until":"2026-12-04T10:30:00Z","name":"Alice Approver"}`,
			"Alice Approver took action act_01 for review until 2026-12-04T10:30:00Z (advisory: others may still decide it)"},
		{"taken over", alice, "acme", "action.taken", act, `{"until":"2026-12-04T10:30:00Z","from":"Bob Approver"}`,
			"Alice Approver took action act_01 for review until 2026-12-04T10:30:00Z, taking it over from Bob Approver (advisory: others may still decide it)"},
		{"released", alice, "acme", "action.released", act, `{}`,
			"Alice Approver released action act_01, no longer reviewing it"},
		{"claim time", alice, "", "notify.claim_time_set", audit.Subject{Type: "notify_settings", ID: "claim"}, `{"minutes":30}`,
			"Alice Approver set an approver's Take to hold for 30 minutes"},
		{"expired", audit.Actor{Type: audit.ActorSystem, ID: "expiry"}, "acme", "action.expired", act, `{"approvals":"0 of 2"}`,
			"Action act_01 expired with 0 of 2 approvals — Refund $2,400.00 to account ••9182"},
		{"cancelled", bot, "acme", "action.cancelled", act, `{}`,
			`Agent key "refund-bot" withdrew action act_01 — Refund $2,400.00 to account ••9182`},
		{"executed", executor, "acme", "action.executed", act, `{"receipt":{"refund_id":"rf_1"}}`,
			"Warden's executor executed action act_01 — Refund $2,400.00 to account ••9182"},
		{"executed by the agent", bot, "acme", "action.executed", act, `{"reported_by":"agent","error":""}`,
			`Agent key "refund-bot" reported that it executed action act_01 — Refund $2,400.00 to account ••9182`},
		{"failed", executor, "acme", "action.failed", act, `{"reason":"card declined"}`,
			"Action act_01 failed — Refund $2,400.00 to account ••9182 — reason: card declined"},
		{"retried", alice, "acme", "action.retried", act, `{"reason":"provider back"}`,
			"Alice Approver retried action act_01 — Refund $2,400.00 to account ••9182 under its own idempotency key — reason: provider back"},
		{"failed at the agent", bot, "acme", "action.failed", act, `{"reported_by":"agent","error":"timeout"}`,
			`Agent key "refund-bot" reported that action act_01 failed — Refund $2,400.00 to account ••9182 — error: timeout`},
		{"unknown action", alice, "acme", "action.approved", audit.Subject{Type: "action", ID: "act_gone"}, `{"approvals":"1 of 1"}`,
			"Alice Approver approved action act_gone"},

		{"verify ok", alice, "", "audit.verify_ok", audit.Subject{Type: "audit_chain", ID: "main"}, `{"verified_through_seq":41}`,
			"Alice Approver verified the audit chain: intact through seq 41"},
		{"verify failed", alice, "", "audit.verify_failed", audit.Subject{Type: "audit_chain", ID: "main"}, `{"verified_through_seq":3,"first_bad_seq":4}`,
			"Alice Approver verified the audit chain: broken at seq 4"},

		{"reconciled", audit.Actor{Type: audit.ActorSystem, ID: "reconciler"}, "acme", "effect.reconciled", audit.Subject{Type: "action", ID: "act_1"}, `{"outcome":"found_committed"}`,
			"The reconciler found the effect of action act_1 committed at the provider and recorded it"},
		{"export", alice, "", "audit.export", audit.Subject{Type: "export", ID: "ab12"}, `{"format":"jsonl","rows":12,"first_seq":3,"last_seq":14}`,
			"Alice Approver exported 12 audit events as JSONL — seq 3–14"},

		{"change requested", alice, "acme", "change.requested", audit.Subject{Type: "change", ID: "chg_1"}, `{"summary":"Switch on tool issue_refund","reason":"INC-1 over"}`,
			"Alice Approver asked a second admin to approve: Switch on tool issue_refund — reason: INC-1 over"},
		{"change approved", alice, "acme", "change.approved", audit.Subject{Type: "change", ID: "chg_1"}, `{"summary":"Switch on tool issue_refund","comment":"ok"}`,
			"Alice Approver approved the change: Switch on tool issue_refund — ok"},
		{"change rejected", alice, "acme", "change.rejected", audit.Subject{Type: "change", ID: "chg_1"}, `{"summary":"Switch on tool issue_refund","comment":"not yet"}`,
			"Alice Approver rejected the change: Switch on tool issue_refund — reason: not yet"},
		{"change applied", alice, "acme", "change.applied", audit.Subject{Type: "change", ID: "chg_1"}, `{"summary":"Switch on tool issue_refund"}`,
			"Approved change applied: Switch on tool issue_refund"},
		{"change failed", alice, "acme", "change.failed", audit.Subject{Type: "change", ID: "chg_1"}, `{"summary":"Switch on tool issue_refund","failure":"What it changes no longer exists."}`,
			"Approved change could not be applied: Switch on tool issue_refund — What it changes no longer exists."},
		{"change expired", alice, "acme", "change.expired", audit.Subject{Type: "change", ID: "chg_1"}, `{"summary":"Switch on tool issue_refund"}`,
			"Change expired before a second admin decided it: Switch on tool issue_refund"},
		{"change approval refused", alice, "acme", "change.approval_refused", audit.Subject{Type: "change", ID: "chg_1"}, `{"summary":"Switch on tool issue_refund","reason":"changed_since_asked","kind":"tool.switch"}`,
			"Alice Approver tried to approve the change and was refused (what it changes was edited since the change was asked, so it stays pending): Switch on tool issue_refund"},
		{"break glass", alice, "acme", "break_glass", audit.Subject{Type: "change", ID: "chg_1"}, `{"summary":"Switch on tool issue_refund","reason":"outage"}`,
			"Alice Approver broke the glass and applied without a second admin: Switch on tool issue_refund — reason: outage"},
		{"break glass reviewed", alice, "acme", "break_glass.reviewed", audit.Subject{Type: "change", ID: "chg_1"}, `{"summary":"Switch on tool issue_refund","note":"fine"}`,
			"Alice Approver reviewed the break-glass change: Switch on tool issue_refund — fine"},
		{"owner set", alice, "", "owner.set", audit.Subject{Type: "tool", ID: "issue_refund"}, `{"before":"","after":"group:payments"}`,
			"Alice Approver made group:payments the owner of issue_refund"},
		{"owner changed", alice, "", "owner.set", audit.Subject{Type: "tool", ID: "issue_refund"}, `{"before":"group:payments","after":"pat@example.com"}`,
			"Alice Approver changed the owner of issue_refund from group:payments to pat@example.com"},
		{"allow-list add", alice, "acme", "allow_list.add", audit.Subject{Type: "allow_term", ID: "hugo boss"}, `{"term":"Hugo Boss"}`,
			"Alice Approver allowed \"Hugo Boss\" to stay readable in tenant acme's redaction"},
		{"allow-list remove", alice, "acme", "allow_list.remove", audit.Subject{Type: "allow_term", ID: "hugo boss"}, `{"term":"Hugo Boss"}`,
			"Alice Approver took \"Hugo Boss\" off tenant acme's redaction allow-list"},
		{"route labelled", alice, "acme", "route.labelled", audit.Subject{Type: "journey", ID: "jrn_1"},
			`{"verdict":"wrong","routed":"order_status","expected":"","previous_verdict":"right","previous_expected":"order_status"}`,
			"Alice Approver labelled the route of journey jrn_1 to order_status wrong: it should have gone to no skill (refused) (was right)"},
		{"label settings", alice, "", "route.label_settings_set", audit.Subject{Type: "route_label_settings", ID: "installation"},
			`{"sample_percent":10,"alert_percent":80,"alert_last_n":50,"previous_sample_percent":5,"previous_alert_percent":80,"previous_alert_last_n":50}`,
			"Alice Approver set labelling: sample 10% of each day's journeys per skill, alert below 80% over the last 50 labelled journeys (was 5%, 80%, 50)"},
		{"unknown verb", alice, "acme", "audit.checkpoint_signed", audit.Subject{Type: "audit_chain", ID: "main"}, `{"seq":9}`,
			"Alice Approver audit.checkpoint_signed audit_chain main"},
		{"unknown verb, no subject", audit.Actor{Type: audit.ActorSystem, ID: "startup"}, "", "server.started", audit.Subject{}, ``,
			"Warden (startup) server.started"},
		{"unknown principal", audit.Actor{Type: audit.ActorPrincipal, ID: "p-gone"}, "", "auth.logout", audit.Subject{Type: "principal", ID: "p-gone"}, `{}`,
			"Console user p-gone signed out"},
		{"unknown key", audit.Actor{Type: audit.ActorKey, ID: "key_gone"}, "acme", "key.revoked", key, `{}`,
			"Agent key key_gone was refused: the key is revoked"},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := sentenceEvent(t, tt.actor, tt.tenant, tt.verb, tt.subject, tt.details)
			if got := eventSentence(e, names); got != tt.want {
				t.Errorf("eventSentence(%s %s) =\n  %q\nwant\n  %q", tt.verb, tt.details, got, tt.want)
			}
		})
		covered[tt.verb] = true
	}
	for _, verb := range AuditVerbs {
		if !strings.HasSuffix(verb, ".") && !covered[verb] {
			t.Errorf("no sentence case for %s", verb)
		}
	}
}

// TestAuditVerbsAreEveryVerbWardenWrites: the verbs the code passes to
// audit.Append are all in AuditVerbs (and so have a sentence, above).
// Verbs built at run time are listed here by hand.
func TestAuditVerbsAreEveryVerbWardenWrites(t *testing.T) {
	built := []string{
		"key.revoked", "key.expired", // gateway: "key." + reasonOf(err)
		"action.executed", "action.failed", // approvals.AgentReported: "action." + r.Status
	}
	literal := regexp.MustCompile(`(?i)verb\s*(?::|:=|=)\s*"([a-z][a-z0-9_]*\.[a-z0-9_.]+)"|"([a-z][a-z0-9_]*\.[a-z0-9_]+)", func\(ctx context\.Context, tx \*sql\.Tx`)
	found := map[string]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, "_templ.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(src, []byte("audit")) {
			return err
		}
		for _, m := range literal.FindAllSubmatch(src, -1) {
			v := string(m[1]) + string(m[2])
			found[v] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range built {
		found[v] = "built at run time"
	}
	if len(found) < 20 {
		t.Fatalf("found only %d verbs in the source: %v", len(found), found)
	}
	for v, where := range found {
		if !slices.Contains(AuditVerbs, v) {
			t.Errorf("%s (%s) is not in AuditVerbs, so it has no sentence", v, where)
		}
	}
}
