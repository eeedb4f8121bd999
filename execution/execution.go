// Package execution is what happens to an action once it is asked for:
// external agents' proposals (/v1/actions), decisions and what they set
// off, executing an approved action exactly once through the effect
// ledger (package ledger below), its callback to the agent, reversal by a
// compensating action, retrying failed ones, expiry, and the reconciler
// that finishes what a crash interrupted. A journey that waited for an
// action is resumed through package journeys.
//
// The caller builds one Service at start-up (app.New), registers its job
// handlers (HandleExecute, HandleCallback, HandleExpire) with the queue
// and its periodic work (Reconcile, ExpireActions), and calls Decide when
// an approver decides:
//
//	ex := execution.New(execution.Options{DB: db, Journeys: js, Providers: ps, ...})
//	queue.Handle(execution.JobExecuteAction, ex.HandleExecute)
//	res, err := ex.Decide(ctx, approvals.Request{...})
package execution

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/jobs"
	"github.com/wardenhq/warden/platform/problem"
	"github.com/wardenhq/warden/platform/redact"
	"github.com/wardenhq/warden/platform/seal"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools"
)

// Options build a Service.
type Options struct {
	DB        *store.DB
	Log       *slog.Logger
	Providers map[string]tools.Provider // by provider kind: "builtin", "http"
	Redactor  *redact.Redactor
	Sealer    *seal.Sealer
	// Queue runs approved actions and callbacks; Decide wakes it.
	Queue *jobs.Queue
	// Journeys resumes or ends the journey that waited for an action.
	Journeys *journeys.Service
	// AllowPrivateCallbacks lets agents' callback URLs point at loopback
	// and private addresses (development mode only).
	AllowPrivateCallbacks bool
	Now                   func() time.Time
	// MoreTools finds a tool the catalog does not hold by the name an
	// action carries (the tools of upstream MCP servers, SERVER__TOOL:
	// mcpservers.Gateway.CatalogTool), or answers store.ErrNotFound.
	MoreTools func(ctx context.Context, q store.Querier, name string) (tools.Tool, error)
}

// Service runs actions from proposal to effect.
type Service struct {
	o Options
	// operational is what a decision on a runbook's action does.
	operational atomic.Pointer[approvals.OnDecided]
	// afterRecord is a test fault (SetAfterRecordFault); nil in
	// production.
	afterRecord atomic.Pointer[func(tool string)]
}

// New returns a service with defaults filled in.
func New(o Options) *Service {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{o: o}
}

// SetAfterRecordFault makes fn run when an execution has recorded its
// effect's receipt in the ledger, before the action is marked executed:
// the window a replica that dies leaves an action executing although it
// was paid. Test faults only (WARDEN_TEST_HANG_AFTER_RECORD).
func (s *Service) SetAfterRecordFault(fn func(tool string)) { s.afterRecord.Store(&fn) }

// Sealer is the sealer of action arguments (tests and benchmarks create
// actions with it).
func (s *Service) Sealer() *seal.Sealer { return s.o.Sealer }

// tool finds an action's tool: in the catalog, or among MoreTools.
func (s *Service) tool(ctx context.Context, q store.Querier, name string) (tools.Tool, error) {
	t, err := catalog.Get(ctx, q, name)
	if errors.Is(err, store.ErrNotFound) && s.o.MoreTools != nil {
		return s.o.MoreTools(ctx, q, name)
	}
	return t, err
}

func (s *Service) redactJSON(raw []byte) string { return s.o.Redactor.JSONText(raw) }

// refuse is the refusal or failure with code, as journeys report them
// (the API's codes are one vocabulary).
func refuse(code, message string, cause error) *problem.Error {
	return journeys.Refuse(code, message, cause)
}
