package mcpservers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/platform/risk"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
)

// The runtime sees an upstream tool as a tools.Tool named SERVER__TOOL
// with provider "mcp", served by the Gateway: approvals, the effect
// ledger, the execution job, the guard (a breaker and a bulkhead per
// server), budgets and spans then treat it as any tool of the catalog.

// CatalogTool is t as the runtime sees it, under its server's settings:
// switched on only when the server and the tool are on and the tool is
// classified and still listed; one attempt (an MCP server takes no
// idempotency key, so a call is never sent twice: AtMostOnce).
func (t Tool) CatalogTool(s Server) tools.Tool {
	impact, rev := risk.ImpactLow, risk.Irreversible
	if t.Impact == ImpactHigh {
		impact = risk.ImpactHigh
	}
	if t.Reversible {
		rev = risk.Reversible
	}
	return tools.Tool{
		Name: t.ExposedName(), Description: t.Description, Impact: impact, Reversibility: rev,
		Provider: tools.ProviderMCP, Timeout: s.Timeout, MaxAttempts: 1, ArgsSchema: t.InputSchema,
		Enabled:        s.Enabled && t.Enabled && t.Classified() && !t.Gone,
		UnitCostMicros: t.UnitCostMicros, AmountArg: t.AmountArg, CurrencyArg: t.CurrencyArg, TargetArg: t.TargetArg,
		Dependency: "mcp:" + s.Name, AtMostOnce: true,
	}
}

// splitName splits SERVER__TOOL; ok is false for any other name.
func splitName(name string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(name, "__")
	return server, tool, ok && server != "" && tool != ""
}

// CatalogTool finds the upstream tool an action names (SERVER__TOOL), as
// the runtime sees it (Tool.CatalogTool); store.ErrNotFound for any
// other name. execution.Options.MoreTools.
func (g *Gateway) CatalogTool(ctx context.Context, q store.Querier, name string) (tools.Tool, error) {
	server, tool, ok := splitName(name)
	if !ok {
		return tools.Tool{}, store.ErrNotFound
	}
	t, err := GetTool(ctx, q, server, tool)
	if errors.Is(err, ErrToolNotFound) {
		return tools.Tool{}, store.ErrNotFound
	}
	if err != nil {
		return tools.Tool{}, err
	}
	s, err := Get(ctx, q, server)
	if err != nil {
		return tools.Tool{}, err
	}
	return t.CatalogTool(s), nil
}

// Execute forwards one call to its upstream (tools.Provider, "mcp"): the
// Go SDK's client on the server's pooled session (pool.go), the server's
// token and timeout, one attempt — sent once more, on a new session, only
// when the first provably did nothing upstream (sendProbe.notSent). The
// upstream's answer is the result, its tool error included; an approved
// call's answer is also kept sealed for the client that waits for it
// (mcp_calls). An approved call's tool error is a Terminal failure (the
// upstream refused: the action fails, saying why). A call that could not
// be sent, or whose answer was lost, is Transient — the server's breaker
// counts it — and its reason says whether it may have happened; the
// tool's MaxAttempts of 1 and the ledger's AtMostOnce rule make sure it
// is never sent again.
func (g *Gateway) Execute(ctx context.Context, t tools.Tool, call tools.Call) (tools.Result, error) {
	server, tool, ok := splitName(t.Name)
	if !ok {
		return tools.Result{}, &tools.Error{Kind: tools.Terminal, Reason: "not an MCP tool: " + t.Name}
	}
	s, cred, err := withCredentials(ctx, g.db.Read(), g.sealer, server)
	if err != nil {
		return tools.Result{}, &tools.Error{Kind: tools.Terminal, Reason: "the server's settings cannot be read", Err: err}
	}
	// The upstream call gets a context of its own, ended with the
	// caller's: the door's context carries the SDK's values of the
	// agent's session (its protocol version), which the client would
	// otherwise send to the upstream as its own. (The pooled session is
	// opened under a context of its own too: callOnce.)
	up, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	base, err := g.httpClient(up)
	if err != nil {
		return tools.Result{}, &tools.Error{Kind: tools.Transient, Reason: "the call was not sent: " + upstreamError(err), Err: err}
	}
	key := sessionKey{server: s.Name, url: s.URL, cred: credentialHash(cred), client: base}
	relay, _ := ctx.Value(relayKey{}).(progressRelay)
	var res *mcp.CallToolResult
	for attempt := 1; ; attempt++ {
		var opened, notSent bool
		res, opened, notSent, err = g.callOnce(up, s, cred, key, tool, call.Args, relay)
		if err == nil {
			break
		}
		switch {
		case !opened:
			return tools.Result{}, &tools.Error{Kind: tools.Transient, Reason: "the call was not sent: " + upstreamError(err), Err: err}
		case notSent && attempt == 1 && up.Err() == nil:
			// The upstream provably did not handle it (it forgot the
			// session, or nothing was written): once more, on a new
			// session.
			continue
		case notSent && up.Err() == nil:
			return tools.Result{}, &tools.Error{Kind: tools.Transient, Reason: "the call was not sent: " + upstreamError(err), Err: err}
		}
		return tools.Result{}, &tools.Error{Kind: tools.Transient, Reason: "the call may or may not have reached the server: " + upstreamError(err), Err: err}
	}
	out, err := json.Marshal(res)
	if err != nil {
		return tools.Result{}, &tools.Error{Kind: tools.Terminal, Reason: "the server's answer cannot be encoded", Err: err}
	}
	if call.IdempotencyKey != "" {
		if err := g.keepResult(ctx, call.IdempotencyKey, out); err != nil {
			g.log.Error("keep an MCP call's result for its client", "tool", t.Name, "err", err)
		}
	}
	if res.IsError && call.IdempotencyKey != "" {
		// An approved call the upstream refused: the action fails, saying
		// why (a read's tool error is an answer like any other).
		return tools.Result{Output: out}, &tools.Error{Kind: tools.Terminal, Reason: "the MCP server answered with a tool error: " + firstText(res)}
	}
	return tools.Result{Output: out, Units: 1}, nil
}

// callOnce sends one call on the server's pooled session (pool.go),
// opening one if needed. opened is false when no session could be
// opened (nothing was sent); notSent reports whether the call's request
// provably did nothing upstream (sendProbe.notSent). A session the
// failure may have broken is dropped from the pool. With a relay, the
// call carries a progress token of its own and the upstream's progress
// goes to relay (progress.go).
func (g *Gateway) callOnce(ctx context.Context, s Server, cred credentials, key sessionKey, tool string, args any, relay progressRelay) (res *mcp.CallToolResult, opened, notSent bool, err error) {
	e, err := g.sessions.acquire(ctx, key, func() (*mcp.ClientSession, error) {
		// Not any one caller's context: the session outlives the call
		// that opened it, and carries none of its values.
		octx, cancel := context.WithTimeout(context.Background(), s.Timeout)
		defer cancel()
		return g.connectWith(octx, s, cred, key.client)
	})
	if err != nil {
		return nil, false, true, err
	}
	defer g.sessions.release(e)
	probe := &sendProbe{}
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	var reg *relayed
	if relay != nil {
		tok := progressToken()
		reg = &relayed{session: e.cs, relay: relay}
		g.relays.Store(tok, reg)
		defer g.relays.Delete(tok)
		params.SetProgressToken(tok)
		probe.progress = &progressCounter{}
	}
	res, err = e.cs.CallTool(withProbe(ctx, probe), params)
	if reg != nil && err == nil {
		// The SDK may hand the last notifications to its handler after
		// the answer: relay them before it.
		settle(ctx, probe.progress, reg)
	}
	if err != nil {
		if !sessionIntact(ctx, err) {
			g.sessions.drop(e)
		}
		return nil, true, probe.notSent(err), err
	}
	return res, true, false, nil
}

// keepResult seals an approved call's answer for its client (mcp_calls).
func (g *Gateway) keepResult(ctx context.Context, idempotencyKey string, out []byte) error {
	if g.sealer == nil {
		return errors.New("no sealer")
	}
	sealed := g.sealer.Seal(out, "mcp_result:"+idempotencyKey)
	// Kept even when the call's context ends: the upstream answered.
	ctx = context.WithoutCancel(ctx)
	return g.db.Transact(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE mcp_calls SET result_sealed = ? WHERE idempotency_key = ?`, sealed, idempotencyKey)
		return err
	})
}

// keptResult opens the answer keptResult sealed; nil when there is none.
func (g *Gateway) keptResult(ctx context.Context, q store.Querier, idempotencyKey string) (*mcp.CallToolResult, error) {
	sealed, err := store.Get(ctx, q, func(r store.Scanner) (string, error) {
		var s string
		return s, r.Scan(&s)
	}, `SELECT result_sealed FROM mcp_calls WHERE idempotency_key = ?`, idempotencyKey)
	if errors.Is(err, store.ErrNotFound) || (err == nil && sealed == "") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := g.sealer.Open(sealed, "mcp_result:"+idempotencyKey)
	if err != nil {
		return nil, fmt.Errorf("open an MCP call's result: %w", err)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("read an MCP call's result: %w", err)
	}
	return &res, nil
}

// firstText is the first text of a result, bounded, for a reason.
func firstText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			if len(t.Text) > 200 {
				return t.Text[:200] + "…"
			}
			return t.Text
		}
	}
	return "(no text)"
}
