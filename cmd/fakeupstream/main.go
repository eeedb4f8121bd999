// Command fakeupstream serves models/fakeupstream on an address, for the
// demo: point a model deployment's base URL at http://ADDR/v1.
//
//	go run ./cmd/fakeupstream -addr 127.0.0.1:8090
package main

import (
	"flag"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/wardenhq/warden/models/fakeupstream"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "address to listen on")
	flag.Parse()
	slog.Info("fake upstream listening", "base_url", "http://"+*addr+"/v1")
	srv := &http.Server{Addr: *addr, Handler: fakeupstream.New(), ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		slog.Error("fake upstream stopped", "err", err)
		os.Exit(1)
	}
}
