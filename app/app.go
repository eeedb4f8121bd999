// Package app is the composition root: it builds Warden's runtime from
// its parts — admission (keys, budgets, rate limits), the skills and their
// router, the tool providers behind their guard, journeys, the execution
// of actions, the model gateway, the job queue and its periodic work,
// redaction and sealing — and seeds the development demo. The console
// and the JSON API use the one Runtime it builds.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/admission"
	"github.com/wardenhq/warden/alerts"
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/execution"
	"github.com/wardenhq/warden/execution/ledger"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/models"
	"github.com/wardenhq/warden/notify"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/releases"
	"github.com/wardenhq/warden/runbooks"
	"github.com/wardenhq/warden/skills"
	"github.com/wardenhq/warden/tools"
	"github.com/wardenhq/warden/tools/sim"
)

// Runtime is the request plane.
type Runtime struct {
	Gateway   *admission.Gateway
	Journeys  *journeys.Service
	Execution *execution.Service
	Sim       *sim.Provider // the simulated orders-and-payments system
	DB        *store.DB
	Queue     *jobs.Queue
	Guard     *tools.Guard // the policy in front of every tool call: its Health is on the health page and /metrics
	// Models is the chat gateway model-driven skills and the router model
	// call; the HTTP route can share it (one set of concurrency slots per
	// deployment).
	Models *models.Gateway
	// MCP is the gateway to upstream MCP servers: the /mcp door and the
	// provider of their tools' approved calls.
	MCP *mcpservers.Gateway
	// Notify sends notifications (its delivery jobs run on Queue) and
	// the Notifications page's Send test.
	Notify *notify.Service
	log    *slog.Logger
	router *skills.Router

	alertInterval time.Duration
	started       time.Time // when New ran: journeys admitted before belong to an earlier process
	// Replica is this process's entry in the replicas table: it
	// heartbeats while Run runs, journeys record it, and the key and
	// tenant rate limits divide by the replicas alive.
	Replica *store.Replica
	// runbooks are the runbooks the console loaded, for the job that
	// applies an approved runbook.publish change (SetRunbooks).
	runbooks *atomic.Pointer[runbooks.Set]
}

// SetRunbooks gives the runtime the runbooks the console loaded
// (WARDEN_RUNBOOK_DIR), so an approved change publishing their buttons
// can be applied by the apply job too.
func (rt *Runtime) SetRunbooks(s *runbooks.Set) { rt.runbooks.Store(s) }

// Run does the runtime's background work until ctx ends: the replica's
// heartbeat and the job queue, which executes approved actions, sends
// callbacks, expires each pending action at its expiry and runs the
// periodic jobs (periodicJobs) once per interval across all replicas. It
// returns once the jobs in progress have finished and the journeys this
// replica still had running have ended, their reservations released
// (journeys.Service.Shutdown): its caller stops serving requests first
// (serve.go: the HTTP server's shutdown, then ctx).
func (rt *Runtime) Run(ctx context.Context) {
	// What a previous process left running (a kill -9, a shutdown whose
	// grace ran out) ends at once, and its budget reservations come back;
	// journeys this process admits are never older than rt.started.
	if n, err := rt.Journeys.SweepLeftRunning(ctx, rt.started); err != nil && ctx.Err() == nil {
		rt.log.ErrorContext(ctx, "sweeping journeys left running by a previous process failed", "err", err)
	} else if n > 0 {
		rt.log.WarnContext(ctx, "journeys left running by a previous process were ended and their reservations released", "journeys", n)
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		// Keys' last use, noted by the gateway without a write, is
		// written every keys.UsageFlushEvery and once more at the end.
		rt.Gateway.Usage().Run(ctx, 0, func(err error) {
			rt.log.ErrorContext(ctx, "writing keys' last use failed; it is tried again", "err", err)
		})
	}()
	go func() {
		defer wg.Done()
		rt.Replica.Run(ctx, func(err error) {
			rt.log.ErrorContext(ctx, "replica heartbeat failed", "replica", rt.Replica.ID, "err", err)
		})
	}()
	go func() {
		defer wg.Done()
		rt.Queue.Run(ctx)
	}()
	wg.Wait()
	// A clean shutdown leaves nothing running for the next start to
	// sweep: no budget stays reserved by a replica that has stopped.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	n, err := rt.Journeys.Shutdown(sctx, journeyStopWait)
	if err != nil {
		rt.log.ErrorContext(sctx, "ending this replica's running journeys at shutdown failed; the next start's sweep ends them", "err", err)
	}
	if n > 0 {
		rt.log.WarnContext(sctx, "journeys still running at shutdown were ended and their reservations released", "journeys", n)
	}
}

// At shutdown, the journeys still running get journeyStopWait to end
// themselves once stopped; shutdownTimeout bounds the whole.
const (
	journeyStopWait = 5 * time.Second
	shutdownTimeout = 15 * time.Second
)

// Periodic job kinds.
const (
	JobReconcile = "reconcile"      // the effect ledger against the providers
	JobExpire    = "expire_overdue" // pending actions whose own expiry job is late or missing
	JobSweep     = "sweep"          // journeys a dead replica left running
	JobAlerts    = "evaluate_alerts"
	JobCanary    = "check_canary"
	JobRetention = "trace_retention"
)

// periodicJobs registers the runtime's periodic work with the queue: the
// reconciler every 30 s, the expiry backstop every minute (each pending
// action has its own expiry job, runtime.JobExpireAction), the sweep of
// journeys a crash left running every minute, the alert rules every
// alertInterval, the canary gate every 15 s and trace retention hourly.
func (rt *Runtime) periodicJobs(q *jobs.Queue) {
	for _, p := range []struct {
		kind  string
		every time.Duration
		run   func(context.Context) error
	}{
		{JobReconcile, 30 * time.Second, rt.reconcile},
		{JobExpire, time.Minute, rt.expire},
		{JobSweep, time.Minute, rt.sweep},
		{JobAlerts, rt.alertInterval, rt.evaluateAlerts},
		{JobCanary, 15 * time.Second, rt.checkCanary},
		{JobRetention, time.Hour, rt.retention},
	} {
		q.Periodic(p.kind, p.every, func(ctx context.Context, _ jobs.Job) error { return p.run(ctx) })
	}
}

func (rt *Runtime) expire(ctx context.Context) error {
	n, err := rt.Execution.ExpireActions(ctx)
	if n > 0 {
		rt.log.InfoContext(ctx, "pending actions expired", "actions", n)
	}
	if err != nil {
		return fmt.Errorf("expiring actions: %w", err)
	}
	// Pending control-plane changes past their expiry too (docs/changes.md).
	m, err := changes.ExpireDue(ctx, rt.DB, time.Now())
	if m > 0 {
		rt.log.InfoContext(ctx, "pending changes expired", "changes", m)
	}
	if err != nil {
		return fmt.Errorf("expiring changes: %w", err)
	}
	return nil
}

// sweep ends journeys a dead process left running (their reservations go
// back to the budget).
func (rt *Runtime) sweep(ctx context.Context) error {
	n, err := rt.Journeys.SweepInterrupted(ctx, 15*time.Minute)
	if n > 0 {
		rt.log.WarnContext(ctx, "journeys interrupted by a crash were ended and their reservations released", "journeys", n)
	}
	if err != nil {
		return fmt.Errorf("sweeping interrupted journeys: %w", err)
	}
	return nil
}

// checkCanary rolls a running canary back as soon as one of its journeys
// failed critically; promotion is left to a person.
func (rt *Runtime) checkCanary(ctx context.Context) error {
	v, rolledBack, err := rt.Journeys.CheckCanary(ctx)
	switch {
	case errors.Is(err, releases.ErrNoCanary):
	case err != nil:
		return fmt.Errorf("evaluating the canary: %w", err)
	case rolledBack:
		rt.log.WarnContext(ctx, "canary rolled back after a critical failure", "candidate", v.Pointer.Candidate,
			"critical_failures", v.CriticalFailures, "trials", v.Trials)
	}
	return nil
}

// evaluateAlerts fires and resolves alerts (package alerts).
func (rt *Runtime) evaluateAlerts(ctx context.Context) error {
	rep, err := alerts.Evaluate(ctx, rt.DB, time.Now())
	if err != nil {
		return fmt.Errorf("evaluating alerts: %w", err)
	}
	for _, a := range rep.Fired {
		rt.log.WarnContext(ctx, "alert fired", "alert", a.ID, "kind", a.Kind, "subject", a.Subject,
			"value", a.Value, "threshold", a.Threshold, "runbook", a.Runbook())
	}
	for _, a := range rep.Resolved {
		rt.log.InfoContext(ctx, "alert resolved", "alert", a.ID, "kind", a.Kind, "subject", a.Subject)
	}
	return nil
}

func (rt *Runtime) reconcile(ctx context.Context) error {
	rep, err := rt.Execution.Reconcile(ctx)
	if n := len(rep.Recorded) + len(rep.Reexecuted) + len(rep.Review) + len(rep.Failed) + len(rep.Completed); n > 0 {
		rt.log.InfoContext(ctx, "reconciled effects", "recorded", len(rep.Recorded), "reexecuted", len(rep.Reexecuted),
			"failed", len(rep.Failed), "review", len(rep.Review), "retry", len(rep.Retry), "completed", len(rep.Completed))
	}
	if err != nil {
		return fmt.Errorf("reconciling the effect ledger: %w", err)
	}
	return nil
}

// Close closes what the runtime opened (the simulator's database, the
// sessions with upstream MCP servers).
func (r *Runtime) Close() error {
	if r.MCP != nil {
		r.MCP.Close()
	}
	if r.Sim != nil {
		return r.Sim.Close()
	}
	return nil
}

// Options build a Runtime.
type Options struct {
	DataDir  string // the runtime's own files: sealing key, simulator database
	DB       *store.DB
	Log      *slog.Logger
	Redactor *redact.Redactor
	Prices   journeys.Prices
	// DevMode lets agents' callbacks reach loopback and private addresses.
	DevMode bool
	// AlertInterval is how often alert rules are evaluated; zero means
	// every minute.
	AlertInterval time.Duration
	// TenantRate bounds one tenant's API requests per second across its
	// keys; zero means gateway.DefaultTenantRate.
	TenantRate int
	// SkillDir holds skills (one directory with a SKILL.md each) added to
	// the built-in ones, or replacing one of the same name; "" for none.
	SkillDir string
	// Faults, in tests and drills only, makes tool providers misbehave on
	// purpose; it sits under the guard, as a real outage would.
	Faults *tools.Injector
	// RouterModel is the model alias that routes journeys among the
	// skills (WARDEN_ROUTER_MODEL); "" for the lexical router alone.
	RouterModel string
	// PublicURL is where users reach the console (WARDEN_PUBLIC_URL):
	// notifications link to its pages.
	PublicURL string
}

// withFaults puts the injector in front of p, if there is one.
func withFaults(f *tools.Injector, p tools.Provider) tools.Provider {
	if f == nil {
		return p
	}
	return f.Wrap(p)
}

// New builds the runtime.
func New(ctx context.Context, o Options) (*Runtime, error) {
	dataDir, db, log, redactor, prices := o.DataDir, o.DB, o.Log, o.Redactor, o.Prices
	sealer, err := seal.LoadOrCreate(dataDir)
	if err != nil {
		return nil, err
	}
	// The simulated orders-and-payments system plays the outside world:
	// it keeps its own database file, in the data directory, so what it
	// stores is redacted with the installation's key, as the ledger's
	// receipts are.
	provider, err := sim.Open(ctx, filepath.Join(dataDir, "simprovider.db"), sim.WithRedactor(redactor))
	if err != nil {
		return nil, err
	}
	ledger.SetRedactor(db, redactor)
	// A skill that cannot be used is named with the reason; the others
	// still load, as runbooks do.
	loaded, problems := skills.Load(o.SkillDir)
	if o.DevMode {
		// The demo's model-driven skill, against the demo's fake model
		// (SeedDemo); a skill directory's own of that name wins.
		if demo, err := skills.ModelDemo(); err != nil {
			problems = append(problems, err)
		} else if !slices.ContainsFunc(loaded, func(s skills.Skill) bool { return s.Name == demo.Name }) {
			loaded = append(loaded, demo)
		}
	}
	for _, p := range problems {
		log.Warn("skill skipped", "dir", o.SkillDir, "error", p.Error())
	}
	log.Info("skills loaded", "count", len(loaded), "dir", o.SkillDir)
	router, err := skills.NewRouter(loaded, skills.DefaultThreshold)
	if err != nil {
		provider.Close()
		return nil, errors.Join(errors.New("skills"), err)
	}
	builtin, err := publishBuiltin(ctx, db, router)
	if err == nil {
		err = keepSkillFiles(ctx, db, loaded)
	}
	if err != nil {
		provider.Close()
		return nil, err
	}
	started := time.Now()
	replica, err := store.RegisterReplica(ctx, db, started)
	if err != nil {
		provider.Close()
		return nil, fmt.Errorf("register replica: %w", err)
	}
	queue := jobs.New(db, log, 2)
	guard := tools.NewGuard(tools.GuardOptions{
		OnStateChange: func(dep, from, to string) {
			log.Warn("circuit breaker changed state", "dependency", dep, "from", from, "to", to)
		},
	})
	chat := models.NewGateway(db, sealer, redactor, log)
	// Every tool call passes one guard: per tool a bulkhead, a circuit
	// breaker, timeouts within the caller's deadline and the one retry
	// layer (docs/failure-modes.md). Providers make one attempt each.
	// The tools of upstream MCP servers are one more provider: a breaker
	// and a bulkhead per server, calls sent at most once.
	mcpGateway := mcpservers.NewGateway(db, sealer, redactor, log)
	providers := map[string]tools.Provider{
		tools.ProviderBuiltin: guard.Wrap(withFaults(o.Faults, provider)),
		tools.ProviderHTTP:    guard.Wrap(withFaults(o.Faults, tools.NewHTTPProvider(&http.Client{Timeout: 5 * time.Minute}))),
		tools.ProviderMCP:     mcpGateway.SetGuard(guard),
	}
	svc := journeys.New(journeys.Options{
		DB:        db,
		Log:       log,
		Router:    router,
		Providers: providers,
		Redactor:  redactor,
		Sealer:    sealer,
		Queue:     queue,
		Prices:    prices,
		Release:   builtin,

		Guard: guard,
		// Model-driven skills and the router model call models through
		// the chat gateway: the tenant's budget, traces in model_calls.
		Models:      chat,
		RouterModel: o.RouterModel,
		ReplicaID:   replica.ID,
	})
	ex := execution.New(execution.Options{
		DB: db, Log: log, Providers: providers, Redactor: redactor, Sealer: sealer, Queue: queue, Journeys: svc,
		AllowPrivateCallbacks: o.DevMode, MoreTools: mcpGateway.CatalogTool,
	})
	queue.Register(execution.JobExecuteAction, ex.HandleExecute)
	queue.Register(execution.JobCallback, ex.HandleCallback)
	queue.Register(journeys.JobContinueJourney, svc.HandleContinue)
	queue.Register(approvals.JobExpire, ex.HandleExpire)
	// Notification channels obey the egress policy of callbacks:
	// loopback and private addresses only in development mode.
	nt := notify.New(notify.Options{DB: db, Sealer: sealer, Log: log, BaseURL: o.PublicURL, AllowInternal: o.DevMode})
	queue.Register(notify.JobDeliver, nt.HandleDeliver)
	// Deliveries have a lane of their own: a receiver that hangs for its
	// ten seconds takes a notification worker, never one executing an
	// approved action.
	queue.Lane(jobs.QueueNotify, notify.Workers, notify.FetchCooldown)
	queue.Register(approvals.JobEscalate, approvals.HandleEscalate(db, time.Now))
	queue.Register(approvals.JobRemind, approvals.HandleRemind(db, time.Now))
	// An approved control-plane change whose approver's request died
	// before applying it is applied by this job (docs/changes.md).
	// A runbook.publish change needs the runbooks the console loaded
	// (SetRunbooks); until then its job fails and is retried.
	dirRunbooks := new(atomic.Pointer[runbooks.Set])
	queue.Register(changes.JobApply, func(ctx context.Context, j jobs.Job) error {
		a := &ChangeApplier{DB: db, Skills: svc, Sealer: sealer, Runbooks: dirRunbooks.Load()}
		return a.HandleJob(ctx, j)
	})
	interval := o.AlertInterval
	if interval <= 0 {
		interval = time.Minute
	}
	gw := admission.New(db, log)
	gw.SetTenantRate(o.TenantRate)
	gw.SetReplicas(replica.Live)
	chat.SetReplicas(replica.Live)
	rt := &Runtime{runbooks: dirRunbooks, Gateway: gw, Models: chat, MCP: mcpGateway, Notify: nt, Journeys: svc, Execution: ex, Sim: provider, DB: db, Queue: queue, Guard: guard, log: log, router: router,
		alertInterval: interval, started: started, Replica: replica}
	rt.periodicJobs(queue)
	return rt, nil
}
