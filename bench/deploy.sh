#!/bin/sh
# deploy.sh [ROUNDS]: issue 20's deploy benchmarks and issue 30's promotion
# benchmark (BENCH=Promote runs it alone) against moto_server
# (skipped without it): a second deploy of an unchanged 20-droplet assembly
# makes no upload and executes no change set (the AWS calls counted per
# deploy), and 16 independent stacks with --concurrency 4 against 1, in
# alternating order each round, medians and their ratio (target <= 0.35),
# on moto as it is and through bench/latencyproxy, which holds every AWS
# call 50 ms (a real region's round trip; issue 27); beside them, where
# each run's time goes: the calls by operation, the time spent in them,
# this process's CPU and moto_server's. The proxy is the benchmark's
# alone: the tests talk to moto_server directly.
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-5}
delay=${DELAY:-50ms}
command -v moto_server >/dev/null || { echo "deploy.sh: moto_server is not installed" >&2; exit 1; }
tmp=$(mktemp -d)
moto_pid= proxy_pid=
cleanup() {
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null || true
  [ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
moto_server -H 127.0.0.1 -p 0 >"$tmp/moto.log" 2>&1 &
moto_pid=$!
moto=
for _ in $(seq 1 600); do
  moto=$(sed -n 's|.*Running on \(http://127\.0\.0\.1:[0-9]*\).*|\1|p' "$tmp/moto.log" | head -1)
  [ -n "$moto" ] && break
  sleep 0.1
done
[ -n "$moto" ] || { echo "deploy.sh: moto_server did not start" >&2; cat "$tmp/moto.log" >&2; exit 1; }
go build -o "$tmp/latencyproxy" ./bench/latencyproxy
"$tmp/latencyproxy" -upstream "$moto" -delay "$delay" -ready "$tmp/proxy.url" 2>"$tmp/proxy.log" &
proxy_pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/proxy.url" ] && break; sleep 0.1; done
proxy=$(cat "$tmp/proxy.url")
echo "moto_server $moto; latencyproxy $proxy (-delay $delay)"
ASSEMBLE_MOTO_ENDPOINT=$moto ASSEMBLE_BENCH_LATENCY_ENDPOINT=$proxy ASSEMBLE_BENCH_MOTO_PID=$moto_pid \
  go test -run '^$' -bench "${BENCH:-DeployUnchanged|DeployConcurrency|Diff20|Promote}" -benchtime "${rounds}x" -timeout 30m ./bench
