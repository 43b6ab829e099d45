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

mkdir -p "$dir"
if [ ! -f "$tree/.complete" ]; then
  rm -rf "$tree"
  gen=../shared/bench/gen_tree.py
  if [ -f "$gen" ]; then
    python3 "$gen" --out "$tree" --files "$files" --text-mib "$text" --blob-mib "$blob"
  else
    # No ../shared: a stand-in generator with the same shape (small YAML
    # templates of varied sizes; one incompressible blob).
    python3 - "$tree" "$files" "$text" <<'PY'
import os, random, sys
out, files, text = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
r = random.Random(1)
words = "app api web queue bucket table role policy key topic rule alarm log group cluster service task image repo stage prod dev eu us west east".split()
mean = text * 1048576 / files
for i in range(files):
    d = os.path.join(out, "templates", "d%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    target = max(200, int(r.lognormvariate(0, 0.8) * mean / 1.377))
    lines = ["AWSTemplateFormatVersion: '2010-09-09'", "Resources:"]
    size = 0
    while size < target:
        name = "".join(w.capitalize() for w in r.sample(words, 3)) + str(r.randint(0, 999))
        block = "  %s:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: %s-%016x\n      Tags:\n        - Key: %s\n          Value: %s\n" % (
            name, "-".join(r.sample(words, 3)), r.getrandbits(64), r.choice(words), "-".join(r.sample(words, 2)))
        lines.append(block.rstrip("\n"))
        size += len(block)
    with open(os.path.join(d, "t%05d.yaml" % i), "w") as f:
        f.write("\n".join(lines) + "\n")
PY
    mkdir -p "$tree/images"
    head -c "$((blob * 1048576))" /dev/urandom > "$tree/images/app-image.tar"
  fi
  cat > "$tree/assembly.yaml" <<'YAML'
environment: aws://123456789012/eu-west-1
droplets:
  Templates:
    type: directory
    properties: {directory: templates, bucketName: bench-bucket}
  Image:
    type: file
    properties: {file: images/app-image.tar, bucketName: bench-bucket, objectKey: app-image.tar}
YAML
  touch "$tree/.complete"
fi
[ "${KEEP:-1}" = 1 ] || trap 'rm -rf "$tree"' EXIT

bin=$dir/assemble
go build -o "$bin" ./cmd/assemble
out=$dir/out
mkdir -p "$out"
echo "tree: $tree ($(du -sh --apparent-size "$tree" | cut -f1), $(find "$tree/templates" -type f | wc -l) text files); $(nproc) cores"
find "$tree" -type f -exec cat {} + >/dev/null # warm the page cache for both tools

. bench/lib.sh # run NAME TARGET CMD...

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
