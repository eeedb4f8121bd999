package models

import (
	"context"
	"slices"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/platform/problem"
)

// An alias is looked up before the key's scopes are read: an alias
// Warden does not serve is 404 model_not_found whatever the key may use
// (as OpenAI answers for a model that does not exist), and only an alias
// that exists is refused for a key without its scope (403). Chat,
// Embeddings and Model follow that order.

// modelNotFound is the answer for an alias without an enabled deployment.
func modelNotFound(alias string) error {
	return problem.NotFound("model_not_found", "There is no model "+alias+" (or every deployment of it is switched off).")
}

// modelAllowed refuses an alias the key's scopes do not allow.
func modelAllowed(caller admission.Caller, alias string) error {
	if caller.Key.Allows("model", alias) {
		return nil
	}
	return problem.Forbidden("model_not_allowed", "This key may not use model "+alias+": it needs the scope model:"+alias+" (or a pattern such as model:*).")
}

// deploymentsUnreadable is the answer when the deployments cannot be read.
func (g *Gateway) deploymentsUnreadable(err error) error {
	const msg = "The model deployments cannot be read right now."
	if g.db.NotAnswering(err) {
		return g.db.StorageNotAnswering(msg, err)
	}
	return problem.Unavailable("unavailable", msg, time.Second).Wrap(err)
}

// Model checks one alias for GET /v1/models/{id}: nil when it exists and
// the key may use it, else 404 model_not_found or 403 model_not_allowed.
func (g *Gateway) Model(ctx context.Context, caller admission.Caller, alias string) error {
	all, err := Aliases(ctx, g.db.Read())
	if err != nil {
		return g.deploymentsUnreadable(err)
	}
	if !slices.Contains(all, alias) {
		return modelNotFound(alias)
	}
	return modelAllowed(caller, alias)
}
