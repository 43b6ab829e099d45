#!/usr/bin/env bash
# Benchmark `assemble build` against `zip -r -6` on the same tree, in one run.
#
# The tree (made here, under /tmp, never in the repository): 20,000 small
# CloudFormation-like text files (~200 MiB) plus one 512 MiB incompressible
# file, with an assembly.yaml that ships them as a directory droplet and a
# file droplet. Each round runs both tools back to back on a warm page cache;
# the script prints every run and then the medians: wall time, peak RSS
# (/usr/bin/time -v) and output size.
#
# Usage: bench/build.sh [ROUNDS]       (default 3)
# Env:   BENCH_DIR (default /tmp/assemble-bench), FILES, TEXT_MIB, BLOB_MIB
#        (defaults 20000, 200, 512), KEEP=1 keeps the data for the next run.
# Targets (issue 2): assemble >= 2.5x faster than zip -r -6, output <= 1%
# larger, peak RSS < 100 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
dir=${BENCH_DIR:-/tmp/assemble-bench}
files=${FILES:-20000} text=${TEXT_MIB:-200} blob=${BLOB_MIB:-512}
tree=$dir/tree-$files-$text-$blob

if [ ! -x /usr/bin/time ]; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y -qq time >/dev/null; else sudo apt-get install -y -qq time >/dev/null; fi
fi
command -v zip >/dev/null || { echo "bench: zip is not installed (apt-get install zip)" >&2; exit 1; }

. bench/lib.sh # make_tree, run

mkdir -p "$dir"
make_tree "$tree" "$files" "$text" "$blob"
[ "${KEEP:-1}" = 1 ] || trap 'rm -rf "$tree"' EXIT

bin=$dir/assemble
go build -o "$bin" ./cmd/assemble
out=$dir/out
mkdir -p "$out"
echo "tree: $tree ($(du -sh --apparent-size "$tree" | cut -f1), $(find "$tree/templates" -type f | wc -l) text files); $(nproc) cores"
find "$tree" -type f -exec cat {} + >/dev/null # warm the page cache for both tools

: > "$out/results.txt"
for i in $(seq "$rounds"); do
  echo "round $i"
  run assemble "$out/bench.cloud" env SOURCE_DATE_EPOCH= "$bin" build -o "$out/bench.cloud" "$tree"
  run zip "$out/bench.zip" sh -c "cd '$tree' && exec zip -q -r -6 '$out/bench.zip' ."
done

python3 - "$out/results.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for tool in ("assemble", "zip"):
    r = [x for x in rows if x[0] == tool]
    med[tool] = [statistics.median(float(x[i]) for x in r) for i in (1, 2, 3)]
a, z = med["assemble"], med["zip"]
print("\nmedians over %d rounds" % (len(rows) // 2))
for tool, (s, rss, size) in med.items():
    print("  %-9s %8.2f s  %7.1f MiB peak RSS  %12d bytes" % (tool, s, rss / 1024, size))
print("  speed-up: %.2fx (target >= 2.5x)" % (z[0] / a[0]))
print("  size:     %+.2f%% vs zip (target <= +1%%)" % ((a[2] / z[2] - 1) * 100))
print("  peak RSS: %.1f MiB (target < 100 MiB)" % (a[1] / 1024))
PY

# Compression by kind of data (issue 23): 8 MiB each of base64 of random
# bytes, JSON records, text (Go's own sources) and random bytes, each
# archived by assemble build and zip -6; the compressed size of each entry
# (unzip -v) side by side. Target: within 2% of zip -6 on text, JSON and
# base64; random data stored.
kinds=$dir/kinds
if [ ! -f "$kinds/.complete" ]; then
  rm -rf "$kinds" && mkdir -p "$kinds/p/data"
  head -c 6291456 /dev/urandom | base64 -w 76 > "$kinds/p/data/base64.txt"
  head -c 8388608 /dev/urandom > "$kinds/p/data/random.bin"
  (set +o pipefail; find "$(go env GOROOT)/src" -name '*.go' -print0 | xargs -0 cat 2>/dev/null | head -c 8388608) > "$kinds/p/data/text.go"
  python3 - "$kinds/p/data/data.json" <<'PY'
import json, random, sys
r = random.Random(1)
recs = [{"id": i, "name": "item-%d" % i, "value": r.random(), "tags": [r.choice(["a", "bb", "ccc"]) for _ in range(3)], "uuid": "%032x" % r.getrandbits(128)} for i in range(50000)]
json.dump(recs, open(sys.argv[1], "w"), indent=1)
PY
  cat > "$kinds/p/assembly.yaml" <<'YAML'
environment: aws://123456789012/eu-west-1
droplets:
  Data:
    type: directory
    properties: {directory: data, bucketName: bench-bucket}
YAML
  touch "$kinds/.complete"
fi
rm -f "$out/kinds.cloud" "$out/kinds.zip"
env SOURCE_DATE_EPOCH= "$bin" build -q -o "$out/kinds.cloud" "$kinds/p"
(cd "$kinds/p/data" && zip -q -6 "$out/kinds.zip" base64.txt data.json text.go random.bin)
echo
echo "compression by kind (bytes after compression):"
python3 - "$out/kinds.cloud" "$out/kinds.zip" <<'PY'
import sys, zipfile
a = {i.filename.removeprefix("data/"): i for i in zipfile.ZipFile(sys.argv[1]).infolist()}
z = {i.filename: i for i in zipfile.ZipFile(sys.argv[2]).infolist()}
for name in ("text.go", "data.json", "base64.txt", "random.bin"):
    print("  %-11s %10d bytes: assemble %10d, zip -6 %10d (%+.2f%%)" % (name, z[name].file_size, a[name].compress_size, z[name].compress_size, (a[name].compress_size / z[name].compress_size - 1) * 100))
PY
