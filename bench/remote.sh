#!/usr/bin/env bash
# Remote locations benchmark (issue 22). Makes its own data under $BENCH_DIR
# (default /tmp/assemble-bench-remote): a signed ~700 MiB assembly (200
# small templates and a 700 MiB incompressible image, built by `assemble
# build`), then, side by side, REPS rounds interleaved, medians:
#   A. `assemble inspect` of it at an https-style (loopback http) location
#      and at an oci:// location: requests and bytes counted at the server
#      (bench/rangeserver). Target: under 1 MiB in at most 4 requests.
#   B. `assemble verify` straight from S3 on moto_server vs `aws s3 cp` then
#      a local `assemble verify`: wall time and peak RSS (/usr/bin/time).
#      Target: faster, under 150 MiB, no file written (the working folder
#      of the remote verify is checked to stay empty).
# Needs: go, python3, moto_server and the aws CLI (moto 5 and aws-cli 1 in
# this image), /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh
D=${BENCH_DIR:-/tmp/assemble-bench-remote}
REPS=${REPS:-3}
PARTS=${PARTS:-AB} # A, B or AB
mkdir -p "$D"
KEY=$ROOT/fixtures/keys/ed25519.sec.asc
RING=$ROOT/fixtures/keys/ed25519.pub.asc
command -v moto_server >/dev/null && command -v aws >/dev/null || { echo "needs moto_server and the aws CLI" >&2; exit 1; }

go build -o "$D/assemble" ./cmd/assemble
go build -o "$D/rangeserver" ./bench/rangeserver
make_tree "$D/tree" 200 2 700
if [ ! -f "$D/files/big.cloud" ]; then
  mkdir -p "$D/files"
  "$D/assemble" build -q -o "$D/files/big.cloud" "$D/tree"
  "$D/assemble" sign -q --key "$KEY" "$D/files/big.cloud" >/dev/null
fi
ls -l "$D/files/big.cloud"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# The counting server: files and an OCI registry.
rm -f "$D/ready"
"$D/rangeserver" -dir "$D/files" -blobs "$D/blobs" -ready "$D/ready" & pids+=($!)
for _ in $(seq 100); do [ -s "$D/ready" ] && break; sleep 0.1; done
BASE=$(cat "$D/ready"); HOSTPORT=${BASE#http://}

# moto_server on a free loopback port.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
moto_server -H 127.0.0.1 -p "$PORT" >"$D/moto.log" 2>&1 & pids+=($!)
export AWS_ENDPOINT_URL=http://127.0.0.1:$PORT AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
for _ in $(seq 100); do curl -sf "$AWS_ENDPOINT_URL/moto-api/" >/dev/null 2>&1 && break; sleep 0.2; done
aws s3 mb s3://bench >/dev/null

echo "push (verify, then upload):"
/usr/bin/time -f "  oci push %e s, %M KiB" "$D/assemble" push -q --keyring "$RING" "$D/files/big.cloud" "oci://$HOSTPORT/bench/app:v1"
/usr/bin/time -f "  s3 push  %e s, %M KiB" "$D/assemble" push -q --keyring "$RING" "$D/files/big.cloud" s3://bench/big.cloud
curl -s "$BASE/_stats" >/dev/null

stats() { curl -s "$BASE/_stats"; }
if [[ $PARTS == *A* ]]; then
echo
echo "A. inspect of a $(stat -c %s "$D/files/big.cloud")-byte assembly, counted at the server:"
for loc in "$BASE/files/big.cloud" "oci://$HOSTPORT/bench/app:v1"; do
  "$D/assemble" inspect "$loc" >/dev/null
  s=$(stats)
  echo "  $loc: $s"
  echo "$s" | python3 -c 'import json,sys; s=json.load(sys.stdin); ok=s["requests"]<=4 and s["bytes"]<1<<20; print("   ", "met" if ok else "NOT MET", "(<= 4 requests, < 1 MiB)")'
done
fi
[[ $PARTS == *B* ]] || exit 0

echo
echo "B. verify from S3 on moto vs aws s3 cp then local verify ($REPS rounds):"
mkdir -p "$D/empty"
: >"$D/results"
timed() {
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$D/time.out" "$@" >/dev/null 2>"$D/err.out" || { cat "$D/err.out" >&2; exit 1; }
  echo "$name $(cat "$D/time.out")" >>"$D/results"
}
for i in $(seq "$REPS"); do
  rm -rf "$D/empty"; mkdir "$D/empty"
  (cd "$D/empty" && timed remote_verify "$D/assemble" verify --keyring "$RING" s3://bench/big.cloud)
  [ -z "$(ls -A "$D/empty")" ] || { echo "remote verify wrote: $(ls -A "$D/empty")" >&2; exit 1; }
  rm -f "$D/dl.cloud"
  timed cp_then_verify bash -c "aws s3 cp --quiet s3://bench/big.cloud '$D/dl.cloud' && '$D/assemble' verify --keyring '$RING' '$D/dl.cloud'"
done
rm -f "$D/dl.cloud"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
python3 - "$D/results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, sec, rss = line.split()
    rows.setdefault(name, []).append((float(sec), int(rss)))
med = {k: statistics.median(s for s, _ in v) for k, v in rows.items()}
rss = {k: max(r for _, r in v) / 1024 for k, v in rows.items()}
for k in rows:
    print(f"  {k:15s} median {med[k]:7.2f} s  runs {[s for s, _ in rows[k]]}  peak RSS {rss[k]:6.1f} MiB")
r, c = med["remote_verify"], med["cp_then_verify"]
print(f"  verify from S3 {r:.2f} s vs cp+verify {c:.2f} s -> {c/r:.2f}x (target > 1), peak RSS {rss['remote_verify']:.1f} MiB (target < 150), no file written")
PY
