package mcpservers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/wardenhq/warden/allowlist"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/tools"
)

type callerKey struct{}

// WithCaller returns ctx carrying the authenticated caller of a /mcp
// request, which Handler serves.
func WithCaller(ctx context.Context, c admission.Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// Handler is the /mcp door (Streamable HTTP, the Go SDK's handler). Each
// request must carry its caller (WithCaller): the handler authenticating
// the key puts it there; a request without one is refused (400).
//
// The door is stateless: every request gets a server built for its key,
// offering exactly the tools the key's scopes allow, so any replica can
// answer any request and a tool classified or switched off counts from
// the next request on. GET and DELETE (session streams) answer 405, as
// the SDK's stateless mode does.
func (g *Gateway) Handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		c, ok := r.Context().Value(callerKey{}).(admission.Caller)
		if !ok {
			return nil
		}
		s, err := g.serverFor(r.Context(), c)
		if err != nil {
			g.log.Error("build the MCP server of a key", "key", c.Key.Prefix, "err", err)
			return nil
		}
		return s
	}, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: false,
		Logger:       g.log,
		// Every request carries a virtual key (no cookie, no ambient
		// credential a rebinding page could use), and Warden often sits
		// behind a proxy on loopback whose Host is the public name.
		DisableLocalhostProtection: true,
	})
}

// serverFor builds the MCP server a key sees: the tools still listed by
// their upstreams whose scope (mcp:SERVER/TOOL) the key holds, named
// SERVER__TOOL with the upstream's description and input schema.
// Unclassified tools and tools of a server switched off are listed too;
// calling them is refused with a tool error that says why (docs/mcp.md).
func (g *Gateway) serverFor(httpCtx context.Context, c admission.Caller) (*mcp.Server, error) {
	tools, err := offered(httpCtx, g.db.Read())
	if err != nil {
		return nil, err
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "warden", Version: g.version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}, Logger: g.log})
	for _, t := range tools {
		if !c.Key.Allows("mcp", t.Server+"/"+t.Name) || !objectSchema(t.InputSchema) {
			continue
		}
		s.AddTool(&mcp.Tool{Name: t.ExposedName(), Description: t.Description, InputSchema: t.InputSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				// The SDK runs the tool under its session's context, which
				// the HTTP request's end does not cancel: a client that
				// went away must end a call waiting for approval.
				ctx, cancel := context.WithCancel(ctx)
				defer cancel()
				defer context.AfterFunc(httpCtx, cancel)()
				if hold, ok := httpCtx.Value(holdKey{}).(func() bool); ok {
					ctx = WithHold(ctx, hold)
				}
				if release, ok := httpCtx.Value(releaseKey{}).(func()); ok {
					ctx = WithRelease(ctx, release)
				}
				return g.call(ctx, req, c, t.Server, t.Name, req.Params.Arguments), nil
			})
	}
	return s, nil
}

// objectSchema reports whether a schema is a JSON object of type
// "object", as MCP requires of an input schema (the SDK refuses others).
func objectSchema(schema json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(schema, &s) == nil && s.Type == "object"
}

// Refusals a client reads as a tool error (isError), so an agent's model
// sees why and a person can act on it.
const (
	msgUnclassified = "Warden refused this call: the tool is not yet classified by an admin (an admin must give it an impact class on the MCP servers page before any call is forwarded)."
	msgServerOff    = "Warden refused this call: the MCP server %s is switched off."
	msgToolOff      = "Warden refused this call: the tool %s is switched off."
	// msgTenantOff is the per-tenant switch (catalog.SwitchForTenant): 403
	// tool_disabled at the other doors.
	msgTenantOff = "Warden refused this call (tool_disabled): the tool %s is switched off for tenant %s; other tenants keep it."
	msgBudget    = "Warden refused this call: the budget of tenant %s cannot cover it."
	msgGone      = "Warden refused this call: the MCP server no longer offers this tool."
	msgScope     = "Warden refused this call: the key's scopes do not allow %s."
	msgBadArgs   = "Warden refused this call: the arguments do not match the tool's input schema: %s"
	msgUpstream  = "The MCP server %s failed: %s"
)

// call is one tools/call through the door: the tool's state is read
// again (a switch or classification counts from the next call), the
// key's scope checked again, the arguments validated against the tool's
// input schema; a low-impact call is then forwarded through the guard
// (the server's breaker and bulkhead) and the upstream's result returned
// as it is, a high-impact one waits for approval (approve.go). Every call
// is recorded in the audit chain (mcp.call) with its arguments and
// result redacted.
func (g *Gateway) call(ctx context.Context, req *mcp.CallToolRequest, c admission.Caller, server, tool string, args json.RawMessage) *mcp.CallToolResult {
	started := time.Now()
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage(`{}`)
	}
	det := map[string]any{}
	if g.redactor != nil {
		// The tenant's allow-list applies to what the door records and
		// logs of the call, as at the other doors.
		ctx = redact.NewContext(ctx, allowlist.Redactor(ctx, g.db.Read(), g.redactor, c.Tenant.ID))
	}
	var personal *redact.Declared
	res, outcome := g.decide(ctx, req, c, server, tool, args, det, &personal)
	g.record(ctx, c, server, tool, args, personal, res, outcome, time.Since(started), det)
	return res
}

// decide returns the call's result and its outcome for the audit event:
// "forwarded", "refused", "failed" (the upstream could not be reached or
// answered with a protocol error), or an approval's (approve.go); det
// takes what the event should say besides, personal what the tool's input
// schema declares personal (x-warden-personal), once the tool is read.
func (g *Gateway) decide(ctx context.Context, req *mcp.CallToolRequest, c admission.Caller, server, tool string, args json.RawMessage, det map[string]any, personal **redact.Declared) (*mcp.CallToolResult, string) {
	if !c.Key.Allows("mcp", server+"/"+tool) {
		return toolError(fmt.Sprintf(msgScope, "mcp:"+server+"/"+tool)), "refused"
	}
	t, err := GetTool(ctx, g.db.Read(), server, tool)
	if errors.Is(err, ErrToolNotFound) || (err == nil && t.Gone) {
		return toolError(msgGone), "refused"
	}
	if err != nil {
		g.log.Error("read MCP tool", "server", server, "tool", tool, "err", err)
		return toolError("Warden could not read the tool's settings; try again."), "failed"
	}
	*personal, _ = redact.DeclaredIn(t.InputSchema)
	s, err := Get(ctx, g.db.Read(), server)
	if err != nil {
		g.log.Error("read MCP server", "server", server, "err", err)
		return toolError("Warden could not read the server's settings; try again."), "failed"
	}
	switch {
	case !s.Enabled:
		return toolError(fmt.Sprintf(msgServerOff, server)), "refused"
	case !t.Enabled:
		return toolError(fmt.Sprintf(msgToolOff, t.ExposedName())), "refused"
	case !t.Classified():
		return toolError(msgUnclassified), "refused"
	}
	if off, err := catalog.OffForTenant(ctx, g.db.Read(), t.ExposedName(), c.Tenant.ID); err != nil {
		g.log.Error("read the tenant's tool switch", "tool", t.ExposedName(), "err", err)
		return toolError("Warden could not read the tool's settings; try again."), "failed"
	} else if off {
		return toolError(fmt.Sprintf(msgTenantOff, t.ExposedName(), c.Tenant.Slug)), "refused"
	}
	if err := policy.UniqueMembers(args); err != nil {
		return toolError(fmt.Sprintf(msgBadArgs, err)), "refused"
	}
	if err := policy.ValidateArgs(t.InputSchema, args); err != nil {
		return toolError(fmt.Sprintf(msgBadArgs, err)), "refused"
	}
	ct := t.CatalogTool(s)
	if t.Impact == ImpactHigh {
		return g.approval(ctx, req, c, ct, args, det)
	}
	return g.forward(ctx, req, c, ct, args, det)
}

// forward sends a low-impact call through the guard, charging the tool's
// unit cost to the tenant's budget: reserved before the call (refused
// when it does not fit), charged once the upstream answered. When the
// client asked for progress, the upstream's progress notifications are
// relayed to its request (progress.go).
func (g *Gateway) forward(ctx context.Context, req *mcp.CallToolRequest, c admission.Caller, ct tools.Tool, args json.RawMessage, det map[string]any) (*mcp.CallToolResult, string) {
	cost := ct.UnitCostMicros
	if cost > 0 {
		err := g.db.Transact(ctx, func(tx *store.Tx) error { return budgets.Reserve(ctx, tx, c.Tenant.ID, cost, time.Now()) })
		switch {
		case errors.Is(err, budgets.ErrExhausted), errors.Is(err, budgets.ErrNoBudget):
			return toolError(fmt.Sprintf(msgBudget, c.Tenant.Slug)), "refused"
		case err != nil:
			g.log.Error("reserve an MCP call's cost", "tool", ct.Name, "err", err)
			return toolError("Warden could not reserve this call's cost; try again."), "failed"
		}
	}
	pctx := ctx
	if r := relayFor(ctx, req); r != nil {
		pctx = withRelay(ctx, r)
	}
	out, err := g.provider.Execute(pctx, ct, tools.Call{Tool: ct.Name, Args: args, Tenant: c.Tenant.Slug})
	var res mcp.CallToolResult
	if err == nil {
		err = json.Unmarshal(out.Output, &res)
	}
	if cost > 0 {
		charged := int64(0)
		if err == nil {
			charged = cost
			det["cost_micros"] = cost
		}
		// Settled even when the agent has gone: the call was sent.
		sctx := context.WithoutCancel(ctx)
		if serr := g.db.Transact(sctx, func(tx *store.Tx) error {
			return budgets.Settle(sctx, tx, c.Tenant.ID, cost, charged)
		}); serr != nil {
			g.log.Error("settle an MCP call's cost", "tool", ct.Name, "err", serr)
		}
	}
	if err != nil {
		return toolError(fmt.Sprintf(msgUpstream, strings.TrimPrefix(ct.Dependency, "mcp:"), providerReason(err))), "failed"
	}
	return &res, "forwarded"
}

// providerReason is what a client is told of a failed forward.
func providerReason(err error) string {
	var pe *tools.Error
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return err.Error()
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// maxRecorded bounds the redacted result kept in a call's audit event.
const maxRecorded = 8 << 10

// record appends the call's audit event (mcp.call): who, which tool, the
// outcome, and the arguments and result after the redactor (never raw;
// left out without a redactor), the arguments personal declares personal
// tokenised whole. A failure to record is logged: the answer has already
// been decided.
func (g *Gateway) record(ctx context.Context, c admission.Caller, server, tool string, args json.RawMessage, personal *redact.Declared, res *mcp.CallToolResult, outcome string, took time.Duration, det map[string]any) {
	for k, v := range map[string]any{"server": server, "tool": tool, "outcome": outcome, "is_error": res.IsError, "duration_ms": took.Milliseconds(), "key": c.Key.Prefix} {
		det[k] = v
	}
	call := journeys.DoorCall{TenantID: c.Tenant.ID, KeyID: c.Key.ID, Skill: "mcp:" + server, Tool: server + "__" + tool,
		Latency: took, At: time.Now().Add(-took)}
	call.Status, call.StepStatus = traceStatus(outcome)
	if id, ok := det["action_id"].(string); ok {
		call.CorrelationID = id
	}
	if cost, ok := det["cost_micros"].(int64); ok {
		call.CostMicros = cost
	}
	if g.redactor != nil {
		red, ok := redact.FromContext(ctx)
		if !ok {
			red = allowlist.Redactor(ctx, g.db.Read(), g.redactor, c.Tenant.ID)
		}
		det["arguments"] = redacted(red, args, personal)
		call.Arguments = red.JSONTextDeclared(args, personal)
		if b, err := json.Marshal(res); err == nil {
			det["result"] = redacted(red, b, nil)
			call.Result = red.JSONText(b)
		}
		if call.StepStatus != "ok" {
			call.ErrorCode, call.Error = outcome, red.String(firstText(res))
		}
	}
	// Recorded even when the agent has gone: the call happened.
	ctx = context.WithoutCancel(ctx)
	call.ID = journeys.NewID()
	det["trace"] = call.ID
	err := g.db.Transact(ctx, func(tx *store.Tx) error {
		_, err := audit.Append(ctx, tx, audit.Event{Actor: audit.Actor{Type: audit.ActorKey, ID: c.Key.ID}, Tenant: c.Tenant.Slug, Verb: "mcp.call",
			Subject: audit.Subject{Type: "mcp_tool", ID: server + "/" + tool}, Details: det})
		return err
	})
	if err != nil {
		g.log.Error("audit MCP call", "server", server, "tool", tool, "err", err)
	}
	// The trace apart: a trace that cannot be written never costs the
	// call its audit event.
	if err := g.db.Transact(ctx, func(tx *store.Tx) error {
		_, err := journeys.RecordDoorCall(ctx, tx, call)
		return err
	}); err != nil {
		g.log.Error("trace MCP call", "server", server, "tool", tool, "err", err)
	}
}

// traceStatus is how a call's outcome reads in Traces: the journey's
// status and its step's.
func traceStatus(outcome string) (journey, step string) {
	switch outcome {
	case "forwarded":
		return journeys.StatusCompleted, "ok"
	case "refused":
		return journeys.StatusFailed, "refused"
	case "rejected":
		return journeys.StatusRejected, journeys.StatusRejected
	case "expired":
		return journeys.StatusExpired, journeys.StatusExpired
	case "cancelled":
		return journeys.StatusCancelled, journeys.StatusCancelled
	case "waiting":
		return journeys.StatusAwaitingApproval, journeys.StatusAwaitingApproval
	}
	return journeys.StatusFailed, "failed"
}

// redacted is a JSON document after red, as a value for an
// audit event's details, the fields personal declares tokenised whole; a
// document too large is kept as its size.
func redacted(red *redact.Redactor, b []byte, personal *redact.Declared) any {
	out, err := red.JSONDeclared(b, personal)
	if err != nil {
		return red.String(string(b))
	}
	if len(out) > maxRecorded {
		return fmt.Sprintf("(%d bytes, not kept)", len(out))
	}
	var v any
	if json.Unmarshal(out, &v) != nil {
		return string(out)
	}
	return v
}
