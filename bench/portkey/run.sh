#!/usr/bin/env bash
# Warden and the Portkey AI gateway side by side, in front of the same fake
# upstream (models/fakeupstream), under the same load: non-streaming chat
# completions at fixed rates, to the fake alone, through Warden (dev mode,
# a virtual key, the durable budget reservation and settlement) and through
# Portkey's open-source gateway (npm @portkey-ai/gateway, run locally with
# x-portkey-provider: openai and x-portkey-custom-host at the fake). Prints
# p50/p99 latency, each gateway's overhead over the fake alone, and the CPU
# time each process spent per answered call (which, unlike latency, hardly
# depends on what else the machine is doing).
#
#   bash bench/portkey/run.sh                  # 500 and 1000 calls/s, 15 s each
#   RATES=200,500 DURATION=10s bash bench/portkey/run.sh
#
# Needs Go and Node 20+; installs the gateway into bench/portkey/node_modules
# on first use. Everything listens on loopback; everything it starts is
# stopped when it ends. Not run in CI.
set -euo pipefail
cd "$(dirname "$0")/../.."

RATES=${RATES:-500,1000}
DURATION=${DURATION:-15s}
FAKE_PORT=${FAKE_PORT:-18090}
WARDEN_PORT=${WARDEN_PORT:-18080}
PORTKEY_PORT=${PORTKEY_PORT:-18787}

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

if [ ! -d bench/portkey/node_modules/@portkey-ai/gateway ]; then
  npm ci --prefix bench/portkey --no-audit --no-fund
fi
go build -o "$work/warden" ./cmd/warden
go build -o "$work/fakeupstream" ./cmd/fakeupstream
go build -o "$work/chatload" ./bench/portkey/chatload

# up waits until URL answers (any HTTP status), for up to 30 s.
up() {
  for _ in $(seq 300); do
    if curl -s -o /dev/null "$1"; then return 0; fi
    sleep 0.1
  done
  echo "$2 did not start; its log:" >&2; cat "$3" >&2; exit 1
}

"$work/fakeupstream" -addr "127.0.0.1:$FAKE_PORT" >"$work/fake.log" 2>&1 &
pids+=($!)
fake_pid=$!
up "http://127.0.0.1:$FAKE_PORT/v1/models" "the fake upstream" "$work/fake.log"

# A deployment "bench" at the fake and a key for it, in a fresh data
# directory, before Warden starts.
key=$("$work/chatload" setup -data "$work/data" -upstream "http://127.0.0.1:$FAKE_PORT/v1")
# Chat calls count in the API's load shedding; it is lifted here so the
# comparison measures latency, not what Warden sheds when it falls behind.
WARDEN_API_MAX_INFLIGHT=100000 WARDEN_DATA_DIR="$work/data" WARDEN_ADDR="127.0.0.1:$WARDEN_PORT" "$work/warden" serve >"$work/warden.log" 2>&1 &
pids+=($!)
warden_pid=$!
up "http://127.0.0.1:$WARDEN_PORT/healthz" "Warden" "$work/warden.log"

node bench/portkey/node_modules/@portkey-ai/gateway/build/start-server.js --port="$PORTKEY_PORT" --headless >"$work/portkey.log" 2>&1 &
pids+=($!)
portkey_pid=$!
up "http://127.0.0.1:$PORTKEY_PORT/" "the Portkey gateway" "$work/portkey.log"

# The machine's load matters as much as the gateways: it is printed too.
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "warden $(git rev-parse --short HEAD), portkey $(node -p "require('./bench/portkey/node_modules/@portkey-ai/gateway/package.json').version"), node $(node --version), $(nproc) cores"
"$work/chatload" -rates "$RATES" -duration "$DURATION" \
  -pid "fake=$fake_pid" -pid "warden=$warden_pid" -pid "portkey=$portkey_pid" \
  -target "fake=http://127.0.0.1:$FAKE_PORT/v1" \
  -target "warden=http://127.0.0.1:$WARDEN_PORT/v1|Authorization: Bearer $key" \
  -target "portkey=http://127.0.0.1:$PORTKEY_PORT/v1|Authorization: Bearer sk-bench|x-portkey-provider: openai|x-portkey-custom-host: http://127.0.0.1:$FAKE_PORT/v1"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
