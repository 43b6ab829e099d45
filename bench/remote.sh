#!/usr/bin/env bash
# Remote locations benchmark (issues 22 and 26). Makes its own data under $BENCH_DIR
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
#   C. (issue 26) read once: a signed BIG_MIB (default 72, above the 64 MiB
#      part size, so S3 takes it in parts) MiB assembly, bytes and requests
#      counted at the server (S3 too: moto_server behind bench/rangeserver)
#      for verify and pull from https://, s3:// and oci://, and every
#      promotion path (push LOCATION LOCATION). Target: <= 1.05x the file.
#   D. (issue 26) inspect of assemblies of 10, 1,000 and 10,000 entries at
#      an https location: requests counted. Target: at most 4.
# PARTS picks them (default CD: A and B read a 700 MiB assembly, too much
# for a shared machine).
# Needs: go, python3, moto_server and the aws CLI (moto 5 and aws-cli 1 in
# this image), /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh
D=${BENCH_DIR:-/tmp/assemble-bench-remote}
REPS=${REPS:-3}
PARTS=${PARTS:-CD} # any of A, B, C, D
BIG_MIB=${BIG_MIB:-72}
mkdir -p "$D"
KEY=$ROOT/fixtures/keys/ed25519.sec.asc
RING=$ROOT/fixtures/keys/ed25519.pub.asc
command -v moto_server >/dev/null && command -v aws >/dev/null || { echo "needs moto_server and the aws CLI" >&2; exit 1; }

go build -o "$D/assemble" ./cmd/assemble
go build -o "$D/rangeserver" ./bench/rangeserver
go build -o "$D/mkassembly" ./bench/mkassembly
mkdir -p "$D/files"
if [[ $PARTS == *[AB]* ]]; then
  make_tree "$D/tree" 200 2 700
  if [ ! -f "$D/files/big.cloud" ]; then
    "$D/assemble" build -q -o "$D/files/big.cloud" "$D/tree"
    "$D/assemble" sign -q --key "$KEY" "$D/files/big.cloud" >/dev/null
  fi
  ls -l "$D/files/big.cloud"
fi

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# moto_server on a free loopback port, reached through the counting
# server.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
moto_server -H 127.0.0.1 -p "$PORT" >"$D/moto.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/moto-api/" >/dev/null 2>&1 && break; sleep 0.2; done

# The counting server: files, an OCI registry, and S3 passed on to moto.
rm -f "$D/ready"
"$D/rangeserver" -dir "$D/files" -blobs "$D/blobs" -ready "$D/ready" -proxy "http://127.0.0.1:$PORT" & pids+=($!)
for _ in $(seq 100); do [ -s "$D/ready" ] && break; sleep 0.1; done
BASE=$(cat "$D/ready"); HOSTPORT=${BASE#http://}
export AWS_ENDPOINT_URL=$BASE AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
aws s3 mb s3://bench >/dev/null

if [[ $PARTS == *[AB]* ]]; then
echo "push (verify, then upload):"
/usr/bin/time -f "  oci push %e s, %M KiB" "$D/assemble" push -q --keyring "$RING" "$D/files/big.cloud" "oci://$HOSTPORT/bench/app:v1"
/usr/bin/time -f "  s3 push  %e s, %M KiB" "$D/assemble" push -q --keyring "$RING" "$D/files/big.cloud" s3://bench/big.cloud
curl -s "$BASE/_stats" >/dev/null
fi

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
if [[ $PARTS == *B* ]]; then
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
fi

# count NAME SIZE CMD...: runs CMD, prints the requests and bytes the
# server sent for it, and the bytes as a multiple of SIZE.
count() {
  local name=$1 size=$2; shift 2
  stats >/dev/null
  "$@" >/dev/null 2>"$D/err.out" || { cat "$D/err.out" >&2; exit 1; }
  stats | python3 -c 'import json,sys; s=json.load(sys.stdin); n,size,lim,reqs=sys.argv[1],int(sys.argv[2]),float(sys.argv[3]),int(sys.argv[4])
r=s["bytes"]/size
ok=s["requests"]<=reqs if reqs else r<=lim
print(f"  {n:38s} {s['"'"'requests'"'"']:4d} requests {s['"'"'bytes'"'"']:11d} bytes  {r:5.3f}x  {'"'"'met'"'"' if ok else '"'"'NOT MET'"'"'}")' "$name" "$size" "${LIMIT:-1.05}" "${REQS:-0}"
}

if [[ $PARTS == *C* ]]; then
C=$D/files/c$BIG_MIB.cloud
if [ ! -f "$C" ]; then
  "$D/mkassembly" -stored-mib "$BIG_MIB" -blob "$D/c.blob" -o "$C"
  rm -f "$D/c.blob"
  "$D/assemble" sign -q --key "$KEY" "$C" >/dev/null
fi
SIZE=$(stat -c %s "$C")
echo
echo "C. read once: a $SIZE-byte signed assembly; the server's bytes sent (source reads; uploads are received) per operation, target <= 1.05x:"
"$D/assemble" push -q --keyring "$RING" "$C" s3://bench/c.cloud >/dev/null
"$D/assemble" push -q --keyring "$RING" "$C" "oci://$HOSTPORT/bench/c:v1" >/dev/null
count "verify https://" "$SIZE" "$D/assemble" verify --keyring "$RING" "$BASE/files/$(basename "$C")"
count "verify s3://" "$SIZE" "$D/assemble" verify --keyring "$RING" s3://bench/c.cloud
count "verify oci://" "$SIZE" "$D/assemble" verify --keyring "$RING" "oci://$HOSTPORT/bench/c:v1"
count "pull https:// -o FILE" "$SIZE" "$D/assemble" pull --keyring "$RING" -o "$D/pulled.cloud" "$BASE/files/$(basename "$C")"
rm -f "$D/pulled.cloud"
count "pull s3:// -o -" "$SIZE" bash -c "'$D/assemble' pull --keyring '$RING' -o - s3://bench/c.cloud | cmp - '$C'"
count "pull oci:// -o FILE" "$SIZE" "$D/assemble" pull --keyring "$RING" -o "$D/pulled.cloud" "oci://$HOSTPORT/bench/c:v1"
rm -f "$D/pulled.cloud"
count "promote https:// -> s3:// (parts)" "$SIZE" "$D/assemble" push --keyring "$RING" "$BASE/files/$(basename "$C")" s3://bench/p1.cloud
aws s3 rm -q s3://bench/p1.cloud 2>/dev/null || aws s3 rm s3://bench/p1.cloud >/dev/null
count "promote s3:// -> s3:// (parts)" "$SIZE" "$D/assemble" push --keyring "$RING" s3://bench/c.cloud s3://bench/p2.cloud
aws s3 rm s3://bench/p2.cloud >/dev/null
count "promote oci:// -> s3:// (parts)" "$SIZE" "$D/assemble" push --keyring "$RING" "oci://$HOSTPORT/bench/c:v1" s3://bench/p3.cloud
aws s3 rm s3://bench/p3.cloud >/dev/null
count "promote s3:// -> oci://" "$SIZE" "$D/assemble" push --keyring "$RING" s3://bench/c.cloud "oci://$HOSTPORT/other/c:v1"
count "promote oci:// -> oci://" "$SIZE" "$D/assemble" push --keyring "$RING" "oci://$HOSTPORT/bench/c:v1" "oci://$HOSTPORT/third/c:v1"
echo "  (one registry holds every blob once: a promotion to it sends no blob, as crane copy does)"
fi

if [[ $PARTS == *D* ]]; then
echo
echo "D. inspect at an https:// location, requests counted (target <= 4):"
for n in 10 1000 10000; do
  E=$D/files/e$n.cloud
  if [ ! -f "$E" ]; then
    rm -rf "$D/e$n"
    python3 - "$D/e$n" "$n" <<'PY'
import os, sys
out, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(out, "templates", "d%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "t%05d.yaml" % i), "w").write("Resources:\n  Topic%d:\n    Type: AWS::SNS::Topic\n" % i)
PY
    "$D/mkassembly" -tree "$D/e$n" -o "$E"
  fi
  REQS=4 count "inspect, $n entries ($(stat -c %s "$E") bytes)" "$(stat -c %s "$E")" "$D/assemble" inspect "$BASE/files/e$n.cloud"
done
fi
