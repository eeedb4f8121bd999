#!/usr/bin/env bash
# Warden's three model doors side by side, in one run, in front of the
# same fake upstream (models/fakeupstream): POST /v1/chat/completions,
# /v1/responses (translated to the upstream's chat completions) and
# /v1/embeddings through Warden (dev mode off, a virtual key, the durable
# budget reservation and settlement, the Model-calls record), each next to
# the same call made to the fake directly. Prints p50/p99 latency per door
# and rate, each door's overhead over the direct call, and Warden's CPU
# time per answered call.
#
#   bash bench/doors/run.sh                    # 500 and 1000 calls/s, 15 s each
#   RATES=200,500 DURATION=10s bash bench/doors/run.sh
#
# Everything listens on loopback; everything it starts is stopped when it
# ends. Not run in CI.
set -euo pipefail
cd "$(dirname "$0")/../.."

RATES=${RATES:-500,1000}
DURATION=${DURATION:-15s}
FAKE_PORT=${FAKE_PORT:-18091}
WARDEN_PORT=${WARDEN_PORT:-18081}

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/warden" ./cmd/warden
go build -o "$work/fakeupstream" ./cmd/fakeupstream
go build -o "$work/chatload" ./bench/portkey/chatload

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

key=$("$work/chatload" setup -data "$work/data" -upstream "http://127.0.0.1:$FAKE_PORT/v1")
WARDEN_API_MAX_INFLIGHT=100000 WARDEN_DATA_DIR="$work/data" WARDEN_ADDR="127.0.0.1:$WARDEN_PORT" "$work/warden" serve >"$work/warden.log" 2>&1 &
pids+=($!)
warden_pid=$!
up "http://127.0.0.1:$WARDEN_PORT/healthz" "Warden" "$work/warden.log"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "warden $(git rev-parse --short HEAD), $(nproc) cores"
fake="http://127.0.0.1:$FAKE_PORT/v1"
warden="http://127.0.0.1:$WARDEN_PORT/v1|Authorization: Bearer $key"
# Each door after its direct call: chatload reports every target's
# overhead over the first, so each door runs in a pass of its own.
for door in chat responses embeddings; do
  direct=chat
  [ "$door" = embeddings ] && direct=embeddings
  echo "== $door"
  "$work/chatload" -rates "$RATES" -duration "$DURATION" \
    -pid "warden-$door=$warden_pid" \
    -target "fake-$direct=$fake" -op "fake-$direct=$direct" \
    -target "warden-$door=$warden" -op "warden-$door=$door"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
