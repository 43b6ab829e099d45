#!/usr/bin/env bash
# Verify/sign benchmark (issue 3). Makes its own data under $BENCH_DIR
# (default /tmp/assemble-bench-verify), then measures side by side, REPS rounds
# interleaved, and prints medians:
#   A. ~750 MiB assembly (20,000 small text files + one 512 MiB incompressible
#      file): `assemble verify` vs `unzip -tq` (inflate + CRC, one core)
#   B. one 1 GiB stored entry: `assemble verify` (salted SHA-256 of the entry)
#      vs `openssl dgst -sha256` of the same bytes
#   C. `assemble sign` vs `assemble verify` on assembly A
# Peak memory (max RSS) of every assemble run comes from /usr/bin/time -v.
# Needs: go, python3, unzip, openssl, /usr/bin/time (apt-get install time).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
D=${BENCH_DIR:-/tmp/assemble-bench-verify}
REPS=${REPS:-5}
mkdir -p "$D"
KEY=$ROOT/fixtures/keys/ed25519.sec.asc
RING=$ROOT/fixtures/keys/ed25519.pub.asc

go build -o "$D/assemble" ./cmd/assemble
go build -o "$D/mkassembly" ./bench/mkassembly
if [ ! -f "$D/tree/.done" ]; then
  rm -rf "$D/tree"
  python3 ../shared/bench/gen_tree.py --out "$D/tree" --files 20000 --text-mib 200 --blob-mib 512
  touch "$D/tree/.done"
fi
if [ ! -f "$D/big.cloud" ]; then
  rm -f "$D/tree/.done.tmp"
  "$D/mkassembly" -tree "$D/tree" -o "$D/big.cloud"
  "$D/assemble" sign --key "$KEY" "$D/big.cloud" >/dev/null
fi
if [ ! -f "$D/blob.cloud" ]; then
  "$D/mkassembly" -stored-mib 1024 -blob "$D/blob.bin" -o "$D/blob.cloud"
  "$D/assemble" sign --key "$KEY" "$D/blob.cloud" >/dev/null
fi
ls -l "$D/big.cloud" "$D/blob.cloud" "$D/blob.bin"
# Warm the page cache so every tool reads from memory.
cat "$D/big.cloud" "$D/blob.cloud" "$D/blob.bin" >/dev/null

# run NAME CMD...: time one run; append "NAME seconds maxrss_kib" to results.
run() {
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$D/time.out" "$@" >/dev/null 2>"$D/err.out" || { cat "$D/err.out" >&2; exit 1; }
  echo "$name $(cat "$D/time.out")" >>"$D/results"
}
: >"$D/results"
for i in $(seq "$REPS"); do
  run verify_big "$D/assemble" verify --keyring "$RING" "$D/big.cloud"
  run unzip_big unzip -tq "$D/big.cloud"
  run verify_blob "$D/assemble" verify --keyring "$RING" "$D/blob.cloud"
  run openssl_blob openssl dgst -sha256 "$D/blob.bin"
  run sign_big "$D/assemble" sign --key "$KEY" -o "$D/resigned.cloud" "$D/big.cloud"
done
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
    print(f"{k:14s} median {med[k]:7.2f} s  runs {[s for s, _ in rows[k]]}  peak RSS {rss[k]:6.1f} MiB")
print()
print(f"A. verify vs unzip -tq (750 MiB):   {med['verify_big']:.2f} s vs {med['unzip_big']:.2f} s  ->  unzip/verify = {med['unzip_big']/med['verify_big']:.2f}x (target >= 1.0)")
print(f"B. 1 GiB stored: verify vs openssl: {med['verify_blob']:.2f} s vs {med['openssl_blob']:.2f} s  ->  openssl/verify = {med['openssl_blob']/med['verify_blob']:.2f}x (target >= 1.4)")
print(f"C. sign vs verify (750 MiB):        {med['sign_big']:.2f} s vs {med['verify_big']:.2f} s  ->  sign/verify = {med['sign_big']/med['verify_big']:.2f}x (target <= 1.2)")
print(f"peak RSS of assemble: {max(rss['verify_big'], rss['verify_blob'], rss['sign_big']):.1f} MiB (target < 100)")
PY
