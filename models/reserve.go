package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/store"
)

// reserve holds call's worst case (call.ReservedMicros) on its tenant's
// budget, in one transaction, before any upstream call: every door (chat,
// responses, embeddings) reserves so. When the budget cannot cover it the
// key's limit ticket is given back and the refusal names the amount.
func (g *Gateway) reserve(ctx context.Context, call *Call, tk ticket, start time.Time) error {
	reserve := call.ReservedMicros
	if err := g.db.Transact(ctx, func(tx *store.Tx) error { return admission.Reserve(ctx, tx, call.TenantID, reserve, start) }); err != nil {
		g.limits.settle(tk, 0)
		var p *problem.Error
		if errors.As(err, &p) && p.Kind == problem.KindExhausted {
			return &problem.Error{Kind: p.Kind, Code: p.Code, Message: "The tenant's budget cannot cover this call's worst case (" +
				fmt.Sprint(reserve) + " micro-units).", Err: err}
		}
		return err
	}
	g.observeReserved(call.Alias, reserve)
	return nil
}

// finisher is how a reserved call is settled, once, on every path, even
// when the agent has gone away: the call's status and latency, what was
// reported charged even beyond the reservation (the upstream has billed
// it; the excess is the call's overrun), the key's tokens corrected, the
// call recorded and its cost header set. keep false drops the prompt and
// completion from the record.
func (g *Gateway) finisher(ctx context.Context, call *Call, tk ticket, keep bool, w Sink, start time.Time) func(status string, httpStatus int) {
	settled := false
	return func(status string, httpStatus int) {
		if settled {
			return
		}
		settled = true
		call.Status, call.HTTPStatus, call.Latency = status, httpStatus, g.now().Sub(start)
		call.OverrunMicros = max(0, call.CostMicros-call.ReservedMicros)
		if !keep {
			call.Prompt, call.Completion = "", ""
		}
		g.limits.settle(tk, call.InputTokens+call.OutputTokens)
		if err := g.settle(context.WithoutCancel(ctx), *call); err != nil {
			g.log.ErrorContext(ctx, "could not settle a model call", "call", call.ID, "err", err)
		}
		setCost(w.Header(), call)
		if call.OverrunMicros > 0 {
			g.log.WarnContext(ctx, "a model call cost more than its reservation", "call", call.ID, "deployment", call.Deployment,
				"reserved_micros", call.ReservedMicros, "cost_micros", call.CostMicros, "overrun_micros", call.OverrunMicros)
		}
	}
}
