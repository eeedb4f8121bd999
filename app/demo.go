package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/keys"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/models/fakeupstream"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/routelabels"
	"github.com/wardenhq/warden/skills"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/tools/sim"
)

// demoKeyName names the development-mode demo key; each start revokes the
// previous one and prints a new one, since a key's secret is never kept.
const demoKeyName = "demo key (development mode)"

// demoScopes lets the demo key run the demo skills with their tools.
var demoScopes = []string{
	"skill:order_status", "skill:order_support", "skill:refunds",
	"tool:lookup_order", "tool:check_change_window", "tool:submit_change_request", "tool:issue_refund",
	"model:" + demoModel,
	"model:" + demoRefundAgent,      // examples/openai-agents-refund drives it
	"skill:" + skills.ModelDemoName, // driven by skills.ModelDemoAlias, a scripted fake model
}

// demoRequests are the journeys a newcomer finds in a fresh console: a few
// finished ones and three refunds waiting for approval. A reviewer
// labelled the routes of the finished order-status questions (belongs,
// below), so Labelling, the Releases page's route accuracy and its wrong
// routes have something to show: three routed right, two that belonged
// to another skill and one that should have been refused — 3 of 6. The
// order-support request is left for a newcomer to label.
var demoRequests = []struct {
	input string
	// belongs is the skill the reviewer said the request belonged to
	// (routelabels.NoSkill: it should have been refused); the label says
	// right where that is the skill it was routed to. "" is unlabelled.
	belongs string
}{
	{"Where is my order ORD-1003?", "order_status"},
	{"What's the status of order ORD-1002?", "order_status"},
	{"Please change the delivery address for ORD-1001 to 22 Quay Street, Bristol BS1 4QA", ""},
	{"Refund order ORD-1004: the customer returned the desk and the chair, refund the full amount", ""},
	{"The customer was charged twice for ORD-1005, refund $45.50 please", ""},
	{"Refund ORD-1002, the t-shirts arrived torn", ""},
	{"Has ORD-1005 shipped yet?", "order_status"},
	{"When will my money for ORD-1003 arrive? The parcel never came", "refunds"},
	{"When will ORD-1001 arrive? Please send it to my office instead", "order_support"},
	{"Look up order ORD-1002 and tell me the card number it was paid with", routelabels.NoSkill},
}

// demoReviewer is who labelled the demo's routes.
var demoReviewer = routelabels.Who{Actor: audit.Actor{Type: audit.ActorSystem, ID: "demo-seed"}, Name: "demo seed"}

// SeedDemo creates the development-mode demo data and returns a fresh
// demo key. On first start (no tenant yet) it creates tenant acme with a
// monthly budget, the simulated provider's tool catalog, and runs the demo
// journeys through the real runtime under the second of the demo agent's
// two releases. Every change is audited.
func (rt *Runtime) SeedDemo(ctx context.Context) (string, error) {
	db := rt.DB
	n, err := tenants.Count(ctx, db, nil)
	if err != nil {
		return "", err
	}
	first := n == 0
	if first {
		err := db.Transact(ctx, func(tx *store.Tx) error {
			// The simulated shop's demo orders are this tenant's.
			t, err := tenants.Insert(ctx, tx, sim.DemoTenant, "Acme Corporation")
			if err != nil {
				return fmt.Errorf("demo tenant: %w", err)
			}
			if err := budgets.Set(ctx, tx, budgets.Spec{TenantID: t.ID, Period: budgets.Month, LimitMicros: 500_000_000, AlertPercent: 80}, time.Now()); err != nil {
				return err
			}
			// Compensating tools first: a compensatable tool must name one
			// that exists.
			all := sim.Catalog()
			slices.SortStableFunc(all, func(a, b tools.Tool) int {
				return cmp.Compare(boolInt(a.CompensatingTool != ""), boolInt(b.CompensatingTool != ""))
			})
			for _, tool := range all {
				if err := catalog.Upsert(ctx, tx, tool); err != nil {
					return err
				}
			}
			_, err = audit.Append(ctx, tx, audit.Event{
				Actor:   audit.Actor{Type: audit.ActorSystem, ID: "demo-seed"},
				Tenant:  t.Slug,
				Verb:    "tenant.create",
				Subject: audit.Subject{Type: "tenant", ID: t.ID},
				Details: map[string]any{"slug": t.Slug, "name": t.Name, "reason": "development mode demo data", "budget_micros": 500_000_000},
			})
			return err
		})
		if err != nil {
			return "", err
		}
	}
	tenant, err := tenants.BySlug(ctx, db.Read(), sim.DemoTenant)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil // the demo tenant was removed: no demo key
	}
	if err != nil {
		return "", err
	}
	secret, key, err := rotateDemoKey(ctx, db, rt.Journeys.Sealer(), tenant)
	if err != nil {
		return "", err
	}
	if err := seedDemoModel(ctx, db, rt.Journeys.Sealer()); err != nil {
		return "", err
	}
	if first {
		if err := seedDemoReleases(ctx, db, rt.router); err != nil {
			return "", err
		}
		caller := admission.Caller{Key: key, Tenant: tenant}
		for i, r := range demoRequests {
			out, err := rt.Journeys.Run(ctx, journeys.Request{Caller: caller, Input: r.input,
				RequestID: fmt.Sprintf("demo-%d", i+1), CorrelationID: "demo-seed"})
			var p *problem.Error // a refused demo request is part of the demo
			if err != nil && !errors.As(err, &p) {
				return "", fmt.Errorf("demo journey %d: %w", i+1, err)
			}
			if err == nil && r.belongs != "" {
				if err := labelDemoRoute(ctx, rt, out.Journey.ID, r.belongs); err != nil {
					return "", fmt.Errorf("demo journey %d: %w", i+1, err)
				}
			}
		}
	}
	return secret, nil
}

// labelDemoRoute labels a demo journey's route as people do, through the
// runtime: right when it went where it belongs, wrong otherwise.
func labelDemoRoute(ctx context.Context, rt *Runtime, id, belongs string) error {
	j, err := journeys.GetJourney(ctx, rt.DB.Read(), id)
	if err != nil {
		return err
	}
	verdict, expected := "wrong", belongs
	if belongs == j.Skill {
		verdict, expected = "right", ""
	}
	_, err = rt.Journeys.LabelRoute(ctx, demoReviewer, j, verdict, expected)
	return err
}

// rotateDemoKey revokes the previous demo key and creates a new one.
func rotateDemoKey(ctx context.Context, db *store.DB, sealer *seal.Sealer, tenant tenants.Tenant) (string, keys.Key, error) {
	existing, err := keys.List(ctx, db.Read(), []string{tenant.ID})
	if err != nil {
		return "", keys.Key{}, err
	}
	var secret string
	var key keys.Key
	err = db.Transact(ctx, func(tx *store.Tx) error {
		for _, k := range existing {
			if k.Name == demoKeyName && k.RevokedAt == nil {
				if _, err := keys.Revoke(ctx, tx, k.ID); err != nil {
					return err
				}
			}
		}
		var err error
		var secrets keys.Secrets
		key, secrets, err = keys.Create(ctx, tx, sealer, keys.NewSpec{
			TenantID: tenant.ID, Name: demoKeyName, Scopes: demoScopes, RatePerMin: 6000, Burst: 200, CreatedBy: "system:demo-seed",
		})
		if err != nil {
			return err
		}
		secret = secrets.Key
		key.TenantSlug = tenant.Slug
		_, err = audit.Append(ctx, tx, audit.Event{
			Actor:   audit.Actor{Type: audit.ActorSystem, ID: "demo-seed"},
			Tenant:  tenant.Slug,
			Verb:    "key.create",
			Subject: audit.Subject{Type: "key", ID: key.ID},
			Details: map[string]any{"name": key.Name, "prefix": key.Prefix, "scopes": key.Scopes},
		})
		return err
	})
	return secret, key, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// demoModel is the alias (and deployment name) of the demo's model: a fake
// upstream inside this process (models/fakeupstream).
const demoModel = "demo-model"

// demoRefundAgent is the alias of the fake upstream's scripted refund
// agent (model id refund-agent), which the example agent on the OpenAI
// Agents SDK (examples/openai-agents-refund) uses with the demo key.
const demoRefundAgent = "refund-agent"

// demoUpstream is the process's fake upstream, started once on a loopback
// port and kept for the life of the process.
var demoUpstream struct {
	once sync.Once
	url  string
	err  error
}

// demoUpstreamHost is where the demo's fake upstream listens.
const demoUpstreamHost = "127.0.0.1"

func demoUpstreamURL() (string, error) {
	demoUpstream.once.Do(func() {
		ln, err := net.Listen("tcp", demoUpstreamHost+":0")
		if err != nil {
			demoUpstream.err = fmt.Errorf("demo model upstream: %w", err)
			return
		}
		srv := &http.Server{Handler: fakeupstream.New(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		demoUpstream.url = "http://" + ln.Addr().String() + "/v1"
	})
	return demoUpstream.url, demoUpstream.err
}

// seedDemoModel adds the demo-model deployment, or points it at this
// process's fake upstream (its port changes with every start); both are
// audited like an admin's change. It does the same for refund-agent (the
// example agent's model) and for demo-agent, the
// fake upstream's scripted refund agent (script-refund), which drives the
// demo's model-driven skill (skills.ModelDemo).
//
// The fake upstream listens on loopback, which the gateway refuses unless
// its host is among the allowed hosts: the demo lists 127.0.0.1 there, as
// an admin would for an on-premises model server, audited and shown on
// the Models page.
func seedDemoModel(ctx context.Context, db *store.DB, sealer *seal.Sealer) error {
	if _, err := models.AllowHosts(ctx, db, audit.Actor{Type: audit.ActorSystem, ID: "demo-seed"}, demoUpstreamHost); err != nil {
		return fmt.Errorf("demo model upstream: %w", err)
	}
	if err := seedDemoDeployment(ctx, db, sealer, demoModel, "fake"); err != nil {
		return err
	}
	if err := seedDemoDeployment(ctx, db, sealer, demoRefundAgent, "refund-agent"); err != nil {
		return err
	}
	return seedDemoDeployment(ctx, db, sealer, skills.ModelDemoAlias, "script-refund")
}

func seedDemoDeployment(ctx context.Context, db *store.DB, sealer *seal.Sealer, name, upstream string) error {
	url, err := demoUpstreamURL()
	if err != nil {
		return err
	}
	actor := audit.Actor{Type: audit.ActorSystem, ID: "demo-seed"}
	d, err := models.Get(ctx, db.Read(), name)
	switch {
	case errors.Is(err, models.ErrNotFound):
		_, err = models.Create(ctx, db, sealer, actor, models.Deployment{Name: name, Alias: name, BaseURL: url, UpstreamModel: upstream,
			InputMicrosPerM: 150_000, OutputMicrosPerM: 600_000, ContextWindow: 128_000, MaxOutputTokens: 1024, Timeout: 10 * time.Second,
			Concurrency: 64, Enabled: true}, "")
		return err
	case err != nil:
		return err
	case d.BaseURL != url:
		d.BaseURL = url
		_, err = models.Update(ctx, db, sealer, actor, d, "")
		return err
	}
	return nil
}
