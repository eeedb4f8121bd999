package mcpservers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/wardenhq/warden/allowlist"
	"github.com/wardenhq/warden/platform/redact"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/tools"
)

// A high-impact call waits for approval. Warden records a pending action
// (the same approvals as /v1/actions: bound to the payload digest, dual
// control and the cumulative rule on its target, expiry), keeps the
// client's request open and tells it, with progress notifications when it
// asked for them, where the action waits. The approval's transaction
// intends the effect in the ledger and enqueues its execution
// (package execution), which calls the upstream once through Execute;
// the request then answers with the upstream's result. A rejection or
// expiry is a tool error saying who decided and why.
//
// The action outlives the request: a client that timed out or went away
// and sends the same call again (same key, tool and arguments: the
// call key) is attached to the same action instead of asking twice.

const (
	// progressEvery is how often a waiting client hears that it waits.
	progressEvery = 10 * time.Second
	// pollEvery is how often the action is read while a client waits
	// (a decision is made by another request, maybe on another replica).
	pollEvery = 200 * time.Millisecond
	// reattachFor is how long after an action ended the same call is
	// still answered with its outcome; later it is asked anew.
	reattachFor = 10 * time.Minute
)

type holdKey struct{}

// WithHold returns ctx carrying hold, which a waiting call runs while it
// waits: it keeps the request's connection writable (the HTTP server's
// write deadline) and answers false when the request must let go (the
// server is shutting down); the client then sends the same call again.
func WithHold(ctx context.Context, hold func() bool) context.Context {
	return context.WithValue(ctx, holdKey{}, hold)
}

type releaseKey struct{}

// WithRelease returns ctx carrying release, which a call runs when it
// starts to wait for approval: it gives back what the request holds of
// the API's in-flight limit.
func WithRelease(ctx context.Context, release func()) context.Context {
	return context.WithValue(ctx, releaseKey{}, release)
}

// errLetGo ends a wait the server will not hold any longer.
var errLetGo = errors.New("the server is shutting down")

// callKey binds a call to its key, tool and payload digest.
func callKey(keyID, tool, digest string) string {
	sum := sha256.Sum256([]byte(keyID + "\x00" + tool + "\x00" + digest))
	return hex.EncodeToString(sum[:])
}

// attachable reports whether a call may be answered by action a, which
// an earlier identical call asked for.
func attachable(a approvals.Action, now time.Time) bool {
	switch a.Status {
	case approvals.StatusPending, approvals.StatusApproved, approvals.StatusExecuting:
		return true
	}
	end := a.ExpiresAt
	for _, t := range []*time.Time{a.ExecutedAt, a.DecidedAt} {
		if t != nil {
			end = *t
			break
		}
	}
	return now.Sub(end) < reattachFor
}

// approval runs a high-impact call: it proposes the action (or finds the
// one an identical earlier call proposed), waits for its outcome while
// the client's request lasts and answers with it. The outcome names the
// audit event's: forwarded, rejected, expired, cancelled, failed,
// refused, or waiting (the client left before the end).
func (g *Gateway) approval(ctx context.Context, req *mcp.CallToolRequest, c admission.Caller, ct tools.Tool, args json.RawMessage, det map[string]any) (*mcp.CallToolResult, string) {
	if g.redactor == nil || g.sealer == nil {
		return toolError("Warden refused this call: approvals through /mcp need the runtime's redactor and sealer."), "refused"
	}
	facts, err := policy.ReadFacts(ct, args)
	if err != nil {
		return toolError(fmt.Sprintf(msgBadArgs, err)), "refused"
	}
	a, attached, err := g.propose(ctx, c, ct, args, facts)
	if err != nil {
		g.log.Error("propose an MCP call for approval", "tool", ct.Name, "err", err)
		return toolError("Warden could not record this call for approval; try again."), "failed"
	}
	det["action_id"], det["reattached"] = a.ID, attached
	if release, ok := ctx.Value(releaseKey{}).(func()); ok {
		release()
	}
	a, err = g.await(ctx, req, a)
	if err != nil {
		if errors.Is(err, errLetGo) {
			return toolError("Warden is restarting; the action stays pending. Send the same call again to wait for it: " + g.actionURL(a.ID)), "waiting"
		}
		if ctx.Err() != nil {
			return toolError("The client stopped waiting; the action stays pending. Send the same call again to wait for it."), "waiting"
		}
		g.log.Error("wait for an MCP call's action", "action", a.ID, "err", err)
		return toolError("Warden could not read the action's state; send the same call again to wait for it."), "failed"
	}
	return g.outcome(ctx, a)
}

// propose records the pending action of a call, with the call key that
// lets a retry find it, in one transaction; or returns the action an
// identical call proposed (attached).
func (g *Gateway) propose(ctx context.Context, c admission.Caller, ct tools.Tool, args json.RawMessage, f policy.Facts) (approvals.Action, bool, error) {
	digest, err := approvals.PayloadDigest(ct.Name, args)
	if err != nil {
		return approvals.Action{}, false, err
	}
	key := callKey(c.Key.ID, ct.Name, digest)
	tool := approvals.Tool{Name: ct.Name, Impact: ct.Impact, Reversibility: ct.Reversibility, Personal: ct.Personal(), TargetArg: ct.TargetArg,
		DeclaresAmount: ct.AmountArg != ""}
	red, ok := redact.FromContext(ctx) // the tenant's (door.go call)
	if !ok {
		red = allowlist.Redactor(ctx, g.db.Read(), g.redactor, c.Tenant.ID)
	}
	shown := approvals.Show(red, tool, args, f.Amount, f.Target)
	target := shown.Target
	spec := approvals.Spec{
		TenantID: c.Tenant.ID, TenantSlug: c.Tenant.Slug, KeyID: c.Key.ID, KeyOwner: approvals.KeyOwner(c.Key.CreatedBy),
		Tool: tool, Args: args,
		ArgsRedacted: shown.Args, Summary: shown.Headline,
		Targets: shown.Targets, Reason: "Asked through the MCP door (/mcp).",
		Rule: "the tool " + ct.Name + " is classified high-impact on the MCP servers page", IdempotencyKey: "mcp_" + store.NewID(), Target: target,
	}
	if f.Amount != nil {
		spec.AmountMinor, spec.Currency = &f.Amount.Minor, f.Amount.Currency.Code
	}
	now := time.Now()
	var a approvals.Action
	attached := false
	try := func() error {
		return g.db.Transact(ctx, func(tx *store.Tx) error {
			attached = false
			// Identical calls at once take turns (PostgreSQL; SQLite's
			// single writer already does): one proposes, the others attach.
			if err := store.SerializeKey(ctx, tx, "mcp_call", key); err != nil {
				return err
			}
			prev, err := store.Get(ctx, tx, func(r store.Scanner) (string, error) {
				var id string
				return id, r.Scan(&id)
			}, `SELECT action_id FROM mcp_calls WHERE call_key = ?`, key)
			switch {
			case err == nil:
				old, err := approvals.Get(ctx, tx, prev)
				if err == nil && attachable(old, now) {
					a, attached = old, true
					return nil
				}
				if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, approvals.ErrNotFound) {
					return err
				}
			case !errors.Is(err, store.ErrNotFound):
				return err
			}
			req, err := approvals.Required(ctx, tx, c.Tenant.ID, f.Amount, target, now)
			if err != nil {
				return err
			}
			spec.ApprovalsRequired, spec.ApprovalBasis = req.Approvals, req.Basis
			if a, err = approvals.Create(ctx, tx, g.sealer, spec, now); err != nil {
				return err
			}
			if prev != "" {
				_, err = tx.ExecContext(ctx, `UPDATE mcp_calls SET action_id = ?, idempotency_key = ?, result_sealed = '', created_at = ? WHERE call_key = ?`,
					a.ID, a.IdempotencyKey, store.FormatTime(now), key)
			} else {
				_, err = tx.ExecContext(ctx, `INSERT INTO mcp_calls (call_key, action_id, idempotency_key, result_sealed, created_at) VALUES (?, ?, ?, '', ?)`,
					key, a.ID, a.IdempotencyKey, store.FormatTime(now))
			}
			return err
		})
	}
	err = try()
	if store.IsUniqueViolation(err, "mcp_calls", "call_key") {
		// An identical call proposed at the same moment won: attach to it.
		err = try()
	}
	return a, attached, err
}

// await reads the action until it has an outcome (executed, failed,
// rejected, expired, cancelled) or ctx ends, telling the client where it
// waits every progressEvery when the client asked for progress.
func (g *Gateway) await(ctx context.Context, req *mcp.CallToolRequest, a approvals.Action) (approvals.Action, error) {
	var token any
	if req != nil && req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	var told time.Time
	step := 0.0
	for {
		switch a.Status {
		case approvals.StatusExecuted, approvals.StatusFailed, approvals.StatusRejected, approvals.StatusExpired, approvals.StatusCancelled:
			return a, nil
		}
		if token != nil && time.Since(told) >= progressEvery {
			step++
			told = time.Now()
			// A client that cannot be told still gets its answer.
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: step, Message: g.waitingMessage(a)})
		}
		select {
		case <-ctx.Done():
			return a, ctx.Err()
		case <-poll.C:
		}
		if ctx.Err() != nil {
			return a, ctx.Err()
		}
		if hold, ok := ctx.Value(holdKey{}).(func() bool); ok && !hold() {
			return a, errLetGo
		}
		next, err := approvals.Get(ctx, g.db.Read(), a.ID)
		if err != nil {
			return a, err
		}
		a = next
	}
}

// actionURL is the action's page in the console.
func (g *Gateway) actionURL(id string) string {
	return strings.TrimRight(g.consoleURL, "/") + "/approvals/" + id
}

// waitingMessage tells a waiting client what it waits for and where.
func (g *Gateway) waitingMessage(a approvals.Action) string {
	switch a.Status {
	case approvals.StatusPending:
		return fmt.Sprintf("Waiting for approval (%d of %d approvals): %s — %s", a.ApprovalsGiven, a.ApprovalsRequired, a.Summary, g.actionURL(a.ID))
	default:
		return fmt.Sprintf("Approved; Warden is sending the call once: %s", g.actionURL(a.ID))
	}
}

// outcome is the answer to a call whose action has ended, and the
// outcome its audit event names.
func (g *Gateway) outcome(ctx context.Context, a approvals.Action) (*mcp.CallToolResult, string) {
	switch a.Status {
	case approvals.StatusExecuted, approvals.StatusFailed:
		res, err := g.keptResult(ctx, g.db.Read(), a.IdempotencyKey)
		if err != nil {
			g.log.Error("read an MCP call's result", "action", a.ID, "err", err)
		}
		if res != nil {
			if a.Status == approvals.StatusFailed {
				return res, "failed"
			}
			return res, "forwarded"
		}
		if a.Status == approvals.StatusExecuted {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Approved and executed; the server's answer was not kept. See " + g.actionURL(a.ID)}}}, "forwarded"
		}
		return toolError(fmt.Sprintf("The approved call failed: %s. See %s", a.Failure, g.actionURL(a.ID))), "failed"
	case approvals.StatusRejected:
		who, why := "an approver", ""
		if ds, err := approvals.Decisions(ctx, g.db.Read(), a.ID); err == nil {
			for _, d := range ds {
				if d.Decision == approvals.Reject {
					who, why = d.PrincipalName, d.Comment
				}
			}
		}
		msg := "Warden refused this call: " + who + " rejected it"
		if why != "" {
			msg += ": " + why
		}
		return toolError(msg + "."), "rejected"
	case approvals.StatusExpired:
		return toolError(fmt.Sprintf("Warden refused this call: nobody decided it before it expired at %s.", a.ExpiresAt.UTC().Format(time.RFC3339))), "expired"
	default:
		return toolError("Warden refused this call: its approval request was cancelled."), "cancelled"
	}
}
