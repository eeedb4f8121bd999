package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/wardenhq/warden/agent"
	"github.com/wardenhq/warden/agent/runtime"
	"github.com/wardenhq/warden/agent/tools/sim"
	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/web"
)

func serve(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	begin := time.Now()
	cfg, ok := loadConfig(args, env, stderr)
	if !ok {
		return 2
	}
	logger, redactor, err := newLogger(cfg.DataDir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "warden: %v\n", err)
		return 1
	}

	db, err := store.Open(ctx, filepath.Join(cfg.DataDir, "warden.db"))
	if err != nil {
		logger.Error("cannot open database", "err", err)
		return 1
	}
	defer db.Close()

	rt, err := agent.New(ctx, agent.Options{
		DataDir: cfg.DataDir, DB: db, Log: logger, Redactor: redactor, DevMode: cfg.DevMode(),
		Prices: runtime.Prices{InputTokenMicros: cfg.PriceInputTokenMicros, OutputTokenMicros: cfg.PriceOutputTokenMicros},
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
		return 1
	}
	cfg = cfg.WithListenAddr(ln.Addr().String())

	srv, err := web.New(web.Options{
		Config:   cfg,
		DB:       db,
		Logger:   logger,
		Redactor: redactor,
		Version:  version,
		Gateway:  rt.Gateway,
		Runtime:  rt.Service,
	})
	if err != nil {
		ln.Close()
		logger.Error("cannot start", "err", err)
		return 1
	}
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
	// retention) stops with ctx; its jobs in progress finish before the
	// database closes.
	bgCtx, stopBG := context.WithCancel(ctx)
	bgDone := make(chan struct{})
	go func() {
		defer close(bgDone)
		rt.Run(bgCtx)
	}()
	err = srv.Serve(ctx, ln)
	stopBG()
	<-bgDone
	if err != nil {
		logger.Error("server stopped", "err", err)
		return 1
	}
	return 0
}
