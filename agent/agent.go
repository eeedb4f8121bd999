// Package agent composes the agent runtime from its parts: the gateway
// (keys, admission, budgets, rate limits), the skills and their router, the
// tool providers, redaction and sealing. The console and the JSON API use
// the one Runtime it builds.
package agent

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/wardenhq/warden/agent/gateway"
	"github.com/wardenhq/warden/agent/redact"
	"github.com/wardenhq/warden/agent/runtime"
	"github.com/wardenhq/warden/agent/seal"
	"github.com/wardenhq/warden/agent/skills"
	"github.com/wardenhq/warden/agent/tools"
	"github.com/wardenhq/warden/agent/tools/sim"
	"github.com/wardenhq/warden/store"
)

// DualControlMinor is the amount (minor units) from which an action needs
// two approvers: $1,000.00.
const DualControlMinor = 100_000

// Runtime is the request plane.
type Runtime struct {
	Gateway *gateway.Gateway
	Service *runtime.Service
	Sim     *sim.Provider // the simulated orders-and-payments system
	DB      *store.DB
	log     *slog.Logger
}

// Close closes what the runtime opened (the simulator's database).
func (r *Runtime) Close() error {
	if r.Sim != nil {
		return r.Sim.Close()
	}
	return nil
}

// New builds the runtime over db, keeping its own files (sealing key,
// simulator database) in dataDir.
func New(ctx context.Context, dataDir string, db *store.DB, log *slog.Logger, redactor *redact.Redactor) (*Runtime, error) {
	sealer, err := seal.LoadOrCreate(dataDir)
	if err != nil {
		return nil, err
	}
	// The simulated orders-and-payments system plays the outside world:
	// it keeps its own database file.
	provider, err := sim.Open(ctx, filepath.Join(dataDir, "simprovider.db"))
	if err != nil {
		return nil, err
	}
	router, err := skills.NewRouter(skills.Demo(), skills.DefaultThreshold)
	if err != nil {
		provider.Close()
		return nil, errors.Join(errors.New("skills"), err)
	}
	svc := runtime.New(runtime.Options{
		DB:     db,
		Log:    log,
		Router: router,
		Providers: map[string]tools.Provider{
			// The simulator makes one attempt per call; the HTTP provider
			// retries on its own.
			tools.ProviderBuiltin: tools.WithRetry(provider, tools.RetryOptions{}),
			tools.ProviderHTTP:    tools.NewHTTPProvider(&http.Client{Timeout: 5 * time.Minute}),
		},
		Redactor:         redactor,
		Sealer:           sealer,
		DualControlMinor: DualControlMinor,
	})
	return &Runtime{Gateway: gateway.New(db, log), Service: svc, Sim: provider, DB: db, log: log}, nil
}
