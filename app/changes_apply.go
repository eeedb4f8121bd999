package app

// Applying control-plane changes (docs/changes.md): the one place a
// governed change reaches its object, whether applied at once (a
// tightening, break glass), by the approving admin's request, or by the
// apply job when that request died first.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/owners"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/routelabels"
	"github.com/wardenhq/warden/runbooks"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
)

// ChangeApplier applies governed changes through the same domain
// functions a direct save calls.
type ChangeApplier struct {
	DB     *store.DB
	Skills *journeys.Service // switches skills in the running agent; nil: only the catalog
	Sealer *seal.Sealer      // opens a sealed upstream key (model.upstream)
	// Runbooks are the runbooks as loaded (runbook.publish checks the
	// file still defines the buttons approved); nil refuses that kind.
	Runbooks *runbooks.Set
}

// UpstreamKeyAAD binds a sealed upstream key to the deployment it is for.
func UpstreamKeyAAD(name string) string { return "change:model.upstream:" + name }

// Apply makes a governed change through the same domain function a
// direct save calls, with its own audit event: kind's after value on its
// object. The actor is the admin who asked for it.
func (a *ChangeApplier) Apply(ctx context.Context, actor audit.Actor, kind, tenantID, tenantSlug, subject string, after json.RawMessage) error {
	return a.apply(ctx, actor, nil, kind, tenantID, tenantSlug, subject, after)
}

// apply is Apply of the approved change ch, or of a break-glass change
// (ch nil): a published runbook button records who approved it.
func (a *ChangeApplier) apply(ctx context.Context, actor audit.Actor, ch *changes.Change, kind, tenantID, tenantSlug, subject string, after json.RawMessage) error {
	var err error
	switch kind {
	case changes.DualControl:
		var v changes.Threshold
		if v, err = changes.Value[changes.Threshold](after); err != nil {
			break
		}
		if !v.Set {
			_, err = tenants.RemoveThreshold(ctx, a.DB, actor, tenantID, v.Currency)
			break
		}
		_, err = tenants.SetThreshold(ctx, a.DB, actor, tenantID, tenants.Threshold{Currency: v.Currency, Minor: v.Minor})
	case changes.DualControlWindow:
		var v changes.Window
		if v, err = changes.Value[changes.Window](after); err == nil {
			_, err = tenants.SetDualControlWindow(ctx, a.DB, actor, tenantID, v.Hours)
		}
	case changes.ToolRisk:
		var v changes.ToolRiskValue
		if v, err = changes.Value[changes.ToolRiskValue](after); err != nil {
			break
		}
		var t tools.Tool
		if err = json.Unmarshal(v.Tool, &t); err == nil {
			_, err = catalog.Update(ctx, a.DB, actor, t)
		}
	case changes.ToolSwitch, changes.SkillSwitch, changes.ToolTenantSwitch:
		var v changes.Switch
		if v, err = changes.Value[changes.Switch](after); err != nil {
			break
		}
		switch {
		case kind == changes.ToolTenantSwitch:
			_, err = catalog.SwitchForTenant(ctx, a.DB, actor, subject, tenantID, tenantSlug, v.On, "")
		case kind == changes.SkillSwitch && a.Skills != nil:
			_, err = a.Skills.SwitchSkill(ctx, actor, subject, v.On, "")
		case kind == changes.SkillSwitch:
			_, err = catalog.SwitchSkill(ctx, a.DB, actor, subject, v.On, "")
		default:
			_, err = catalog.Switch(ctx, a.DB, actor, subject, v.On, "")
		}
	case changes.MCPServerSwitch, changes.MCPToolSwitch:
		var v changes.Switch
		if v, err = changes.Value[changes.Switch](after); err != nil {
			break
		}
		if kind == changes.MCPServerSwitch {
			_, err = mcpservers.SwitchServer(ctx, a.DB, actor, subject, v.On, "")
			break
		}
		server, tool, ok := mcpservers.ParseExposedName(subject)
		if !ok {
			err = mcpservers.ErrToolNotFound
			break
		}
		_, err = mcpservers.SetToolEnabled(ctx, a.DB, actor, server, tool, v.On, "")
	case changes.KeyRateLimit:
		var v changes.KeyRate
		if v, err = changes.Value[changes.KeyRate](after); err != nil {
			break
		}
		var k keys.Key
		if k, err = keys.ByID(ctx, a.DB.Read(), subject); err == nil {
			_, err = models.SetKeyLimits(ctx, a.DB, actor, k, models.KeyLimits{RPM: v.RPM, TPM: v.TPM})
		}
	case changes.KeyScopes:
		var v changes.KeyScopesValue
		if v, err = changes.Value[changes.KeyScopesValue](after); err == nil {
			_, err = keys.SetScopes(ctx, a.DB, actor, subject, v.Scopes)
		}
	case changes.KeyRequestRate:
		var v changes.KeyRequestRateValue
		if v, err = changes.Value[changes.KeyRequestRateValue](after); err == nil {
			_, err = keys.SetRate(ctx, a.DB, actor, subject, v.PerMinute, v.Burst)
		}
	case changes.KeyExpiry:
		var v changes.KeyExpiryValue
		if v, err = changes.Value[changes.KeyExpiryValue](after); err != nil {
			break
		}
		var at *time.Time
		if at, err = v.Time(); err == nil {
			_, err = keys.SetExpiry(ctx, a.DB, actor, subject, at, time.Now())
		}
	case changes.AlertRule:
		var v changes.AlertRuleValue
		if v, err = changes.Value[changes.AlertRuleValue](after); err == nil {
			_, err = alerts.SetRule(ctx, a.DB, actor, alerts.Rule{Skill: v.Skill, FailurePercent: v.FailurePercent,
				P99Latency: time.Duration(v.P99Ms) * time.Millisecond, Window: time.Duration(v.WindowMinutes) * time.Minute,
				MinJourneys: v.MinJourneys}, time.Now())
		}
	case changes.RouteAccuracy:
		var v changes.RouteAccuracyValue
		if v, err = changes.Value[changes.RouteAccuracyValue](after); err == nil {
			_, err = routelabels.SetSettings(ctx, a.DB, actor, routelabels.Settings{SamplePercent: v.SamplePercent,
				AlertPercent: v.AlertPercent, AlertLastN: v.AlertLastN}, time.Now())
		}
	case changes.TenantFreeze:
		var v changes.Frozen
		if v, err = changes.Value[changes.Frozen](after); err == nil {
			_, err = tenants.SetFrozen(ctx, a.DB, actor, tenantID, v.Frozen, "")
		}
	case changes.BudgetLimit:
		var v changes.Budget
		if v, err = changes.Value[changes.Budget](after); err == nil {
			_, err = budgets.SetAudited(ctx, a.DB, actor, budgets.Spec{TenantID: tenantID, Period: v.Period, LimitMicros: v.LimitMicros, AlertPercent: v.AlertPercent}, time.Now())
		}
	case changes.ModelUpstream:
		var v changes.Upstream
		if v, err = changes.Value[changes.Upstream](after); err != nil {
			break
		}
		var d models.Deployment
		if err = json.Unmarshal(v.Deployment, &d); err != nil {
			break
		}
		key := ""
		if v.KeySealed != "" {
			var raw []byte
			if raw, err = a.Sealer.Open(v.KeySealed, UpstreamKeyAAD(d.Name)); err != nil {
				break
			}
			key = string(raw)
		}
		_, err = models.Update(ctx, a.DB, a.Sealer, actor, d, key)
	case changes.AllowHost:
		var v changes.Hosts
		if v, err = changes.Value[changes.Hosts](after); err == nil {
			_, err = models.SetAllowedHosts(ctx, a.DB, actor, v.Hosts)
		}
	case changes.OwnerChange:
		var v changes.Owner
		if v, err = changes.Value[changes.Owner](after); err == nil {
			err = owners.Set(ctx, a.DB, actor, v.Object, v.Key, v.Owner)
		}
	case changes.RunbookPublish:
		var v changes.Buttons
		if v, err = changes.Value[changes.Buttons](after); err != nil {
			break
		}
		by := runbooks.Publisher{ID: actor.ID}
		if ch != nil {
			by = runbooks.Publisher{ID: ch.DecidedBy, Name: ch.DecidedByName, Change: ch.ID}
		}
		err = runbooks.Publish(ctx, a.DB, a.Runbooks, by, v)
	case changes.ReleaseActivate:
		var v changes.Release
		if v, err = changes.Value[changes.Release](after); err != nil {
			break
		}
		by := releases.Author{Actor: actor, Name: v.By}
		m := releases.Move{Agent: v.Agent, Env: v.Env, From: v.From, To: v.Digest, Reason: v.Reason}
		switch v.Move {
		case releases.KindPromoted:
			_, _, err = releases.Promote(ctx, a.DB, by, v.Agent, v.Env, v.Digest, v.Reason)
		case releases.KindActivated:
			_, _, err = releases.ActivateConfirmed(ctx, a.DB, by, m)
		default:
			_, _, err = releases.RollbackConfirmed(ctx, a.DB, by, m)
		}
	default:
		return changes.ErrUnknownKind
	}
	if err != nil {
		return fmt.Errorf("apply %s on %s: %w", kind, subject, err)
	}
	return nil
}

// ApplyApproved applies a change a second admin approved and records the
// outcome: applied, or failed with the reason (a validation error in
// words, anything else as "could not be applied").
func (a *ChangeApplier) ApplyApproved(ctx context.Context, ch changes.Change) (changes.Change, error) {
	if ch.Kind == changes.RunbookPublish && a.Runbooks == nil {
		// Not a failure of the change: the console has not handed over
		// its runbooks yet (SetRunbooks); the apply job tries again.
		return changes.Change{}, fmt.Errorf("apply change %s: the runbooks are not loaded yet", ch.ID)
	}
	actor := audit.Actor{Type: audit.ActorPrincipal, ID: ch.RequestedBy}
	failure := ""
	// The approval is bound to the before the admin saw, and the decision
	// checked it was still true; if the object moved between the decision
	// and this apply (or a crash left it to the job), applying the after
	// would undo that unseen, so the change fails instead.
	_, same, err := a.current(ctx, a.DB.Read(), ch)
	switch {
	case errors.Is(err, keys.ErrRevokedKey):
		failure = "The key was revoked since this was asked for, so its scopes, rate limit and expiry no longer change."
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return changes.Change{}, err
	case err != nil || !same:
		failure = "It changed since this was asked for, so the before shown is no longer true; ask for the change again."
	}
	if failure != "" {
		return a.markApplied(ctx, ch.ID, failure)
	}
	if err := a.apply(ctx, actor, &ch, ch.Kind, ch.TenantID, ch.TenantSlug, ch.Subject, ch.After); err != nil {
		var ve *store.ValidationError
		var pe *problem.Error
		switch {
		case errors.As(err, &pe) && pe.Kind != problem.KindInternal:
			failure = pe.Message
		case errors.As(err, &ve):
			for _, msg := range ve.Fields {
				failure = msg
				break
			}
		case errors.Is(err, store.ErrNotFound):
			failure = "What it changes no longer exists."
		default:
			failure = "It could not be applied; see the server log."
			slog.ErrorContext(ctx, "apply approved change", "change", ch.ID, "kind", ch.Kind, "err", err)
		}
	}
	return a.markApplied(ctx, ch.ID, failure)
}

// markApplied records the outcome once: if the apply job (or the
// approver's request) recorded it first, the change as recorded is
// returned.
func (a *ChangeApplier) markApplied(ctx context.Context, id, failure string) (changes.Change, error) {
	c, err := changes.MarkApplied(ctx, a.DB, id, failure, time.Now())
	if errors.Is(err, changes.ErrNotApplicable) {
		return changes.Get(ctx, a.DB.Read(), id)
	}
	return c, err
}

// HandleJob is the changes.JobApply handler: it applies an approved
// change the approver's request did not get to (the process died between
// the decision and the apply). A change no longer approved — applied or
// failed already — is left as it is, so the job may run more than once.
func (a *ChangeApplier) HandleJob(ctx context.Context, j jobs.Job) error {
	var p changes.ApplyJob
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return &jobs.Permanent{Err: err}
	}
	ch, err := changes.Get(ctx, a.DB.Read(), p.Change)
	if errors.Is(err, changes.ErrNotFound) {
		return &jobs.Permanent{Err: err}
	}
	if err != nil || ch.Status != changes.Approved {
		return err
	}
	_, err = a.ApplyApproved(ctx, ch)
	return err
}

// Check is changes.Decision's Check: whether an approved change's
// object is still in the change's before state, read inside the
// decision's transaction. A deleted object or a revoked key has moved
// too: the change can no longer apply as reviewed.
func (a *ChangeApplier) Check(ctx context.Context, tx *store.Tx, ch changes.Change) (*changes.Moved, error) {
	return a.Moved(ctx, tx, ch)
}

// Moved reports how a change's object moved since the change was asked
// (nil: it is still as the before says), read through q: the change page
// shows a pending change so as out of date, and an approval of it is
// refused.
func (a *ChangeApplier) Moved(ctx context.Context, q store.Querier, ch changes.Change) (*changes.Moved, error) {
	now, same, err := a.current(ctx, q, ch)
	switch {
	case errors.Is(err, keys.ErrRevokedKey):
		return &changes.Moved{Kind: ch.Kind, Was: "live", Now: "revoked"}, nil
	case errors.Is(err, store.ErrNotFound):
		return &changes.Moved{Kind: ch.Kind, Was: "there", Now: "deleted"}, nil
	case err != nil:
		return nil, err
	case same:
		return nil, nil
	}
	raw, err := json.Marshal(now)
	if err != nil {
		return nil, err
	}
	if ch.Kind == changes.RunbookPublish {
		b, _ := changes.Value[changes.Buttons](ch.Before)
		n, _ := changes.Value[changes.Buttons](raw)
		return &changes.Moved{Kind: ch.Kind, Was: buttonsText(b), Now: buttonsText(n)}, nil
	}
	return changes.MovedTo(ch, raw), nil
}

// buttonsText is a runbook's published buttons in a sentence.
func buttonsText(b changes.Buttons) string {
	if len(b.Buttons) == 0 {
		return "none published"
	}
	var parts []string
	for _, x := range b.Buttons {
		parts = append(parts, runbooks.Describe(x))
	}
	return strings.Join(parts, "; ")
}

// current reads a change's object through q: its value now as the kind's
// value (the change's before with what the object holds overwritten),
// and whether it is still the before the change was asked (and reviewed)
// against, compared on the fields the classification reads. A deleted
// object is store.ErrNotFound; a revoked key keys.ErrRevokedKey.
func (a *ChangeApplier) current(ctx context.Context, q store.Querier, ch changes.Change) (any, bool, error) {
	switch ch.Kind {
	case changes.DualControl:
		b, err := changes.Value[changes.Threshold](ch.Before)
		if err != nil {
			return nil, false, err
		}
		now := changes.Threshold{Currency: b.Currency}
		switch m, err := tenants.ThresholdFor(ctx, q, ch.TenantID, b.Currency); {
		case err == nil:
			now.Set, now.Minor = true, m
		case !errors.Is(err, store.ErrNotFound):
			return nil, false, err
		}
		now.Shown = now.Text()
		return now, now.Set == b.Set && now.Minor == b.Minor, nil
	case changes.DualControlWindow:
		t, err := tenants.ByID(ctx, q, ch.TenantID)
		if err != nil {
			return nil, false, err
		}
		return sameAsBefore(ch, changes.Window{Hours: int(t.DualControlWindow / time.Hour)})
	case changes.ToolRisk:
		b, err := changes.Value[changes.ToolRiskValue](ch.Before)
		if err != nil {
			return nil, false, err
		}
		t, err := catalog.Get(ctx, q, ch.Subject)
		if err != nil {
			return nil, false, err
		}
		now := b
		now.Impact, now.Reversibility = t.Impact, t.Reversibility
		return now, now.Impact == b.Impact && now.Reversibility == b.Reversibility, nil
	case changes.ToolSwitch:
		t, err := catalog.Get(ctx, q, ch.Subject)
		if err != nil {
			return nil, false, err
		}
		return sameAsBefore(ch, changes.Switch{On: t.Enabled})
	case changes.ToolTenantSwitch:
		off, err := catalog.OffForTenant(ctx, q, ch.Subject, ch.TenantID)
		if err != nil {
			return nil, false, err
		}
		return sameAsBefore(ch, changes.Switch{On: !off})
	case changes.SkillSwitch:
		on, err := catalog.SkillEnabled(ctx, q, ch.Subject)
		if err != nil {
			return nil, false, err
		}
		return sameAsBefore(ch, changes.Switch{On: on})
	case changes.MCPServerSwitch:
		s, err := mcpservers.Get(ctx, q, ch.Subject)
		if errors.Is(err, mcpservers.ErrNotFound) {
			return nil, false, store.ErrNotFound
		}
		if err != nil {
			return nil, false, err
		}
		return sameAsBefore(ch, changes.Switch{On: s.Enabled})
	case changes.MCPToolSwitch:
		server, tool, ok := mcpservers.ParseExposedName(ch.Subject)
		if !ok {
			return nil, false, store.ErrNotFound
		}
		t, err := mcpservers.GetTool(ctx, q, server, tool)
		if errors.Is(err, mcpservers.ErrToolNotFound) {
			return nil, false, store.ErrNotFound
		}
		if err != nil {
			return nil, false, err
		}
		return sameAsBefore(ch, changes.Switch{On: t.Enabled})
	case changes.KeyRateLimit:
		l, err := models.KeyLimitsOf(ctx, q, ch.Subject)
		if err != nil {
			return nil, false, err
		}
		return sameAsBefore(ch, changes.KeyRate{RPM: l.RPM, TPM: l.TPM})
	case changes.KeyScopes, changes.KeyRequestRate, changes.KeyExpiry:
		k, err := keys.ByID(ctx, q, ch.Subject)
		if err != nil {
			return nil, false, err
		}
		if k.RevokedAt != nil {
			return nil, false, keys.ErrRevokedKey
		}
		if ch.Kind == changes.KeyExpiry {
			return sameAsBefore(ch, changes.ExpiryValue(k.ExpiresAt))
		}
		if ch.Kind == changes.KeyRequestRate {
			return sameAsBefore(ch, changes.KeyRequestRateValue{PerMinute: k.RatePerMin, Burst: k.Burst})
		}
		b, err := changes.Value[changes.KeyScopesValue](ch.Before)
		if err != nil {
			return nil, false, err
		}
		now := changes.KeyScopesValue{Scopes: keys.NormalScopes(k.Scopes)}
		return now, slices.Equal(now.Scopes, keys.NormalScopes(b.Scopes)), nil
	case changes.AlertRule:
		b, err := changes.Value[changes.AlertRuleValue](ch.Before)
		if err != nil {
			return nil, false, err
		}
		rules, err := alerts.Rules(ctx, q)
		if err != nil {
			return nil, false, err
		}
		return sameAsBefore(ch, AlertRuleValue(alerts.RuleFor(rules, b.Skill)))
	case changes.RouteAccuracy:
		set, err := routelabels.GetSettings(ctx, q)
		if err != nil {
			return nil, false, err
		}
		return sameAsBefore(ch, RouteAccuracyValue(set))
	case changes.TenantFreeze:
		t, err := tenants.ByID(ctx, q, ch.TenantID)
		if err != nil {
			return nil, false, err
		}
		return sameAsBefore(ch, changes.Frozen{Frozen: t.Frozen})
	case changes.BudgetLimit:
		b, err := changes.Value[changes.Budget](ch.Before)
		if err != nil {
			return nil, false, err
		}
		now := changes.Budget{}
		switch cur, err := budgets.Get(ctx, q, ch.TenantID); {
		case err == nil:
			now = changes.Budget{Exists: true, Period: cur.Period, LimitMicros: cur.LimitMicros, AlertPercent: cur.AlertPercent}
		case !errors.Is(err, budgets.ErrNoBudget):
			return nil, false, err
		}
		now.Shown = now.Text()
		if !b.Exists {
			return now, !now.Exists, nil
		}
		return now, now.Exists && now.Period == b.Period && now.LimitMicros == b.LimitMicros && now.AlertPercent == b.AlertPercent, nil
	case changes.AllowHost:
		hosts, err := models.AllowedHosts(ctx, q)
		if err != nil {
			return nil, false, err
		}
		b, err := changes.Value[changes.Hosts](ch.Before)
		return changes.Hosts{Hosts: hosts}, err == nil && slices.Equal(hosts, b.Hosts), err
	case changes.OwnerChange:
		b, err := changes.Value[changes.Owner](ch.Before)
		if err != nil {
			return nil, false, err
		}
		cur, err := owners.Get(ctx, q, b.Object, b.Key)
		if err != nil {
			return nil, false, err
		}
		now := b
		now.Owner = cur
		return now, cur == b.Owner, nil
	case changes.ReleaseActivate:
		b, err := changes.Value[changes.Release](ch.Before)
		if err != nil {
			return nil, false, err
		}
		now := b
		now.Digest = releases.NoneActive
		switch p, err := releases.Active(ctx, q, b.Agent, b.Env); {
		case err == nil:
			now.Digest = p.Digest
		case !errors.Is(err, store.ErrNotFound):
			return nil, false, err
		}
		return now, now.Digest == b.Digest, nil
	case changes.RunbookPublish:
		v, err := runbooks.PublishedValue(ctx, q, ch.Subject)
		if err != nil {
			return nil, false, err
		}
		return sameAsBefore(ch, v)
	case changes.ModelUpstream:
		d, err := models.Get(ctx, q, ch.Subject)
		if err != nil {
			return nil, false, err
		}
		b, err := changes.Value[changes.Upstream](ch.Before)
		if err != nil {
			return nil, false, err
		}
		now := b
		now.BaseURL, now.Key = d.BaseURL, "none"
		if d.HasAPIKey {
			now.Key = "stored"
		}
		return now, now.BaseURL == b.BaseURL && now.Key == b.Key, nil
	}
	return nil, false, changes.ErrUnknownKind
}

// sameAsBefore is a kind whose value the object holds whole: now, and
// whether it equals the change's before.
func sameAsBefore(ch changes.Change, now any) (any, bool, error) {
	cur, err := json.Marshal(now)
	if err != nil {
		return nil, false, err
	}
	return now, sameJSON(cur, ch.Before), nil
}

// AlertRuleValue is a skill's alert rule as changes.AlertRule's value.
func AlertRuleValue(r alerts.Rule) changes.AlertRuleValue {
	return changes.AlertRuleValue{Skill: r.Skill, FailurePercent: r.FailurePercent, P99Ms: r.P99Latency.Milliseconds(),
		WindowMinutes: int64(r.Window / time.Minute), MinJourneys: r.MinJourneys}
}

// RouteAccuracyValue is the labelling settings as changes.RouteAccuracy's
// value.
func RouteAccuracyValue(s routelabels.Settings) changes.RouteAccuracyValue {
	return changes.RouteAccuracyValue{AlertPercent: s.AlertPercent, AlertLastN: s.AlertLastN, SamplePercent: s.SamplePercent}
}

// sameJSON compares two JSON objects by value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
