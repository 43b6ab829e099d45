#!/usr/bin/env bash
# Benchmark one-pass signing (issue #13): `assemble build --sign-key` against
# plain `assemble build` and against `build` then `sign`, on the same tree,
# in one run.
#
# The tree is ../shared/bench/gen_tree.py's (20,000 CloudFormation-like text
# files, ~200 MiB, and a 512 MiB docker-save tarball), made under /tmp (a
# built-in generator of the same shape stands in when ../shared is absent),
# with an assembly.yaml shipping it as a directory droplet and a file
# droplet. Each round runs the three, in a rotating order so that none
# always goes first, on a warm page cache; the script prints every run, then
# the medians and the ratios to plain build.
#
# Usage: bench/onepass.sh [ROUNDS]       (default 5)
# Env:   BENCH_DIR (default /tmp/assemble-bench), FILES, TEXT_MIB, BLOB_MIB
#        (defaults 20000, 200, 512), KEEP=1 keeps the data for the next run.
# Target (issue #13): build --sign-key within 1.15x plain build.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
dir=${BENCH_DIR:-/tmp/assemble-bench}
files=${FILES:-20000} text=${TEXT_MIB:-200} blob=${BLOB_MIB:-512}
tree=$dir/tree-$files-$text-$blob

if [ ! -x /usr/bin/time ]; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y -qq time >/dev/null; else sudo apt-get install -y -qq time >/dev/null; fi
fi
. bench/lib.sh # make_tree, run

mkdir -p "$dir"
make_tree "$tree" "$files" "$text" "$blob" # the tree bench/build.sh uses
[ "${KEEP:-1}" = 1 ] || trap 'rm -rf "$tree"' EXIT

bin=$dir/assemble
go build -o "$bin" ./cmd/assemble
out=$dir/out-onepass
mkdir -p "$out"
key=fixtures/keys/ed25519.sec.asc
echo "tree: $tree ($(du -sh --apparent-size "$tree" | cut -f1)); $(nproc) cores"
find "$tree" -type f -exec cat {} + >/dev/null # warm the page cache

build() { run build "$out/plain.cloud" env SOURCE_DATE_EPOCH= "$bin" build -q -o "$out/plain.cloud" "$tree"; }
onepass() { run onepass "$out/onepass.cloud" env SOURCE_DATE_EPOCH= "$bin" build -q --sign-key "$key" -o "$out/onepass.cloud" "$tree"; }
twopass() {
  run twopass "$out/twopass.cloud" sh -c "SOURCE_DATE_EPOCH= '$bin' build -q -o '$out/twopass.cloud' '$tree' && '$bin' sign -q --key '$key' '$out/twopass.cloud'"
}
: > "$out/results.txt"
for i in $(seq "$rounds"); do
  echo "round $i"
  case $((i % 3)) in
    1) build; onepass; twopass ;;
    2) onepass; twopass; build ;;
    0) twopass; build; onepass ;;
  esac
done
"$bin" verify -q --keyring fixtures/keys/ed25519.pub.asc "$out/onepass.cloud"

python3 - "$out/results.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for tool in ("build", "onepass", "twopass"):
    r = [x for x in rows if x[0] == tool]
    med[tool] = [statistics.median(float(x[i]) for x in r) for i in (1, 2, 3)]
print("\nmedians over %d rounds" % (len(rows) // 3))
names = {"build": "build", "onepass": "build --sign-key", "twopass": "build, then sign"}
for tool, (s, rss, size) in med.items():
    print("  %-17s %7.2f s  %6.1f MiB peak RSS  %11d bytes  %.2fx build" % (names[tool], s, rss / 1024, size, s / med["build"][0]))
print("  target: build --sign-key within 1.15x build: %s" % ("met" if med["onepass"][0] <= 1.15 * med["build"][0] else "NOT met"))
PY
