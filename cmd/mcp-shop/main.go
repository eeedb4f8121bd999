// Command mcp-shop serves the example shop's MCP server (package
// tools/sim/mcpshop: lookup_order, issue_refund) over Streamable HTTP at
// http://ADDR/mcp, for registering behind Warden's /mcp door in the
// example agent (examples/openai-agents-mcp-refund) and the benchmark
// (bench/mcp). Its orders and refunds live in memory.
//
//	go run ./cmd/mcp-shop -addr 127.0.0.1:8091
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wardenhq/warden/tools/sim/mcpshop"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8091", "listen address")
	flag.Parse()
	shop := mcpshop.New()
	mux := http.NewServeMux()
	mux.Handle("/mcp", shop.Handler())
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Fprintf(os.Stderr, "mcp-shop: serving lookup_order and issue_refund at http://%s/mcp\n", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
