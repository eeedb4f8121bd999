package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/wardenhq/warden/app"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tools/sim"
	"github.com/wardenhq/warden/web"
)

func serve(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	begin := time.Now()
	cfg, ok := loadConfig(args, env, stderr)
	if !ok {
		return 2
	}
	if err := installKeys(cfg.DataDir, cfg); err != nil {
		fmt.Fprintf(stderr, "warden: %v\n", err)
		return 1
	}
	logger, redactor, err := newLogger(cfg.DataDir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "warden: %v\n", err)
		return 1
	}

	db, err := openDatabase(ctx, cfg)
	if err != nil {
		logger.Error("cannot open database", "err", err)
		return 1
	}
	defer db.Close()

	rt, err := app.New(ctx, app.Options{
		DataDir: cfg.DataDir, DB: db, Log: logger, Redactor: redactor, DevMode: cfg.DevMode(), AlertInterval: cfg.AlertInterval, TenantRate: cfg.TenantRate,
		SkillDir: cfg.SkillDir, RouterModel: cfg.RouterModel, PublicURL: cfg.PublicURL.String(),
		Prices: journeys.Prices{InputTokenMicros: cfg.PriceInputTokenMicros, OutputTokenMicros: cfg.PriceOutputTokenMicros},
	})
	if err != nil {
		logger.Error("cannot start the agent runtime", "err", err)
		return 1
	}
	defer rt.Close()

	if tool, ok := env("WARDEN_TEST_CRASH_AFTER_COMMIT"); ok && tool != "" {
		// Test-only fault: die the moment the simulated provider has
		// committed an effect of this tool, before Warden records it.
		logger.Warn("TEST FAULT ARMED: the process exits after the provider commits", "tool", tool)
		rt.Sim.SetFaults(sim.Faults{AfterCommit: func(t, _ string) {
			if t == tool {
				os.Exit(3)
			}
		}})
	}
	if tool, ok := env("WARDEN_TEST_HANG_AFTER_COMMIT"); ok && tool != "" {
		// Test-only fault: the first execution that commits an effect of
		// this tool at the simulated provider never returns, holding the
		// process in the window between the provider's commit and
		// Warden's record of it until a test kills it (kill -9).
		logger.Warn("TEST FAULT ARMED: an execution hangs after the provider commits", "tool", tool)
		var once sync.Once
		rt.Sim.SetFaults(sim.Faults{AfterCommit: func(t, _ string) {
			hang := false
			if t == tool {
				once.Do(func() { hang = true })
			}
			if hang {
				logger.Warn("TEST FAULT: hanging after the provider committed", "tool", tool)
				select {}
			}
		}})
	}
	if tool, ok := env("WARDEN_TEST_HANG_AFTER_RECORD"); ok && tool != "" {
		// Test-only fault: an execution of this tool whose receipt the
		// ledger has recorded never marks its action executed, holding
		// the process where a replica that dies leaves a paid action
		// executing, until a test kills it (kill -9).
		logger.Warn("TEST FAULT ARMED: an execution hangs after the ledger records it", "tool", tool)
		rt.Execution.SetAfterRecordFault(func(t string) {
			if t == tool {
				logger.Warn("TEST FAULT: hanging after the ledger recorded", "tool", tool)
				select {}
			}
		})
	}

	signer, err := audit.LoadOrCreateSigner(cfg.DataDir)
	if err != nil {
		logger.Error("cannot load the audit signing key", "err", err)
		return 1
	}

	var demoKey string
	if cfg.DevMode() {
		if demoKey, err = rt.SeedDemo(ctx); err != nil {
			logger.Error("cannot create demo data", "err", err)
			return 1
		}
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		logger.Error("cannot listen", "addr", cfg.Addr, "err", err)
		fmt.Fprintf(stderr, "warden: %s\n", listenError(cfg.Addr, err))
		return 1
	}
	cfg = cfg.WithListenAddr(ln.Addr().String())

	srv, err := web.New(web.Options{
		Config:    cfg,
		DB:        db,
		Logger:    logger,
		Redactor:  redactor,
		Version:   version,
		Gateway:   rt.Gateway,
		Runtime:   rt.Journeys,
		Execution: rt.Execution,
		Models:    rt.Models,
		MCP:       rt.MCP,
		Notify:    rt.Notify,
	})
	if err != nil {
		ln.Close()
		logger.Error("cannot start", "err", err)
		return 1
	}
	// The apply job publishes approved runbook buttons against the
	// runbooks the console loaded.
	rt.SetRunbooks(srv.Runbooks())
	mode := "production"
	if cfg.DevMode() {
		mode = "development (built-in identity provider, demo users)"
	}
	logger.Info("warden is listening", "url", cfg.PublicURL.String(), "mode", mode, "data_dir", cfg.DataDir,
		"version", version, "startup", time.Since(begin).Round(time.Millisecond))
	fmt.Fprintf(stdout, "Warden %s listening on %s\n", version, cfg.PublicURL)
	if demoKey != "" {
		// Printed on stdout only, never logged: the secret is not kept.
		fmt.Fprintf(stdout, "Demo virtual key (shown once): %s\n", demoKey)
	}

	// Background work (approved actions, callbacks, reconciler, expiry,
	// retention, audit checkpoints) stops with ctx; its jobs in progress
	// finish before the database closes.
	bgCtx, stopBG := context.WithCancel(ctx)
	var bg sync.WaitGroup
	bg.Go(func() { rt.Run(bgCtx) })
	bg.Go(func() { keepCheckpoints(bgCtx, db, signer, cfg.AuditCheckpointInterval, logger) })
	err = srv.Serve(ctx, ln)
	stopBG()
	bg.Wait()
	// A last checkpoint signs what was written since the one before, so
	// that a clean shutdown leaves no unsigned tail.
	final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	takeCheckpoint(final, db, signer, logger)
	cancel()
	if err != nil {
		logger.Error("server stopped", "err", err)
		return 1
	}
	return 0
}

// keepCheckpoints signs the audit chain's head now and then every interval
// until ctx ends.
func keepCheckpoints(ctx context.Context, db *store.DB, signer *audit.Signer, interval time.Duration, logger *slog.Logger) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		takeCheckpoint(ctx, db, signer, logger)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// takeCheckpoint takes one checkpoint. A broken chain is logged as an
// error, not fatal: the server keeps serving, the chain stays unsigned from
// the break on, and warden audit verify names the seq.
func takeCheckpoint(ctx context.Context, db *store.DB, signer *audit.Signer, logger *slog.Logger) {
	cp, err := audit.Checkpoint(ctx, db, signer, time.Now())
	var ce *audit.ChainError
	switch {
	case errors.As(err, &ce):
		logger.ErrorContext(ctx, "audit chain broken: no checkpoint signed", "seq", ce.Seq, "reason", ce.Reason)
	case err != nil && ctx.Err() == nil:
		logger.ErrorContext(ctx, "audit checkpoint failed", "err", err)
	case err == nil:
		logger.DebugContext(ctx, "audit checkpoint", "seq", cp.Seq, "hash", cp.Hash)
	}
}

// listenError says why Warden cannot listen on addr and which setting
// chooses another address.
func listenError(addr string, err error) string {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Sprintf("the address %s is already in use (another Warden or another program listens on it). "+
			"Stop that program, or choose another address with WARDEN_ADDR or --addr, for example --addr 127.0.0.1:8081.", addr)
	}
	return fmt.Sprintf("cannot listen on %s: %v. Choose the listen address with WARDEN_ADDR or --addr.", addr, err)
}

// openDatabase opens PostgreSQL when WARDEN_DATABASE_URL names one, and
// otherwise the SQLite file in the data directory.
func openDatabase(ctx context.Context, cfg config.Config) (*store.DB, error) {
	return openStore(ctx, cfg.DataDir, cfg, false, false)
}
