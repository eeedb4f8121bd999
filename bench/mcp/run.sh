#!/usr/bin/env bash
# The overhead of Warden's MCP door: a low-impact tools/call
# (lookup_order of the example shop, tools/sim/mcpshop via cmd/mcp-shop)
# through Warden's /mcp (a virtual key, the scope, classification, switch
# and schema checks, the forwarded call with the Go SDK's client, the
# redacted audit event) next to the same call made to the shop directly.
# Prints p50/p99 latency per target and rate, Warden's overhead over the
# direct call, and Warden's CPU time per answered call (from
# /proc/PID/stat).
#
#   bash bench/mcp/run.sh                      # 200 and 1000 calls/s, 10 s each
#   RATES=200 DURATION=5s bash bench/mcp/run.sh
#
# Everything listens on loopback; everything it starts is stopped when it
# ends. It runs for about a minute. Not run in CI.
set -euo pipefail
cd "$(dirname "$0")/../.."

RATES=${RATES:-200,1000}
DURATION=${DURATION:-10s}
WORKERS=${WORKERS:-64}
SHOP_PORT=${SHOP_PORT:-18092}
WARDEN_PORT=${WARDEN_PORT:-18082}

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/warden" ./cmd/warden
go build -o "$work/mcp-shop" ./cmd/mcp-shop
go build -o "$work/mcpload" ./bench/mcp/mcpload

up() {
  for _ in $(seq 300); do
    if curl -s -o /dev/null "$1"; then return 0; fi
    sleep 0.1
  done
  echo "$2 did not start; its log:" >&2; cat "$3" >&2; exit 1
}

"$work/mcp-shop" -addr "127.0.0.1:$SHOP_PORT" >"$work/shop.log" 2>&1 &
pids+=($!)
shop_pid=$!
up "http://127.0.0.1:$SHOP_PORT/mcp" "the shop" "$work/shop.log"

shop="http://127.0.0.1:$SHOP_PORT/mcp"
key=$("$work/mcpload" setup -data "$work/data" -upstream "$shop")
WARDEN_API_MAX_INFLIGHT=100000 WARDEN_DATA_DIR="$work/data" WARDEN_ADDR="127.0.0.1:$WARDEN_PORT" "$work/warden" serve >"$work/warden.log" 2>&1 &
pids+=($!)
warden_pid=$!
up "http://127.0.0.1:$WARDEN_PORT/healthz" "Warden" "$work/warden.log"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "warden $(git rev-parse --short HEAD), $(nproc) cores, $WORKERS sessions per target"
"$work/mcpload" -rates "$RATES" -duration "$DURATION" -workers "$WORKERS" \
  -pid "warden=$warden_pid" -pid "direct=$shop_pid" \
  -target "direct=$shop|tool=lookup_order" \
  -target "warden=http://127.0.0.1:$WARDEN_PORT/mcp|tool=shop__lookup_order|Authorization: Bearer $key"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
