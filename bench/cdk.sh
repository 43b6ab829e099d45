#!/usr/bin/env bash
# Benchmark `assemble build` of a CDK cloud assembly (cdk.out) holding one
# 200 MiB asset, against `zip -r -6` of the same folder, in one run.
#
# The cdk.out (made here, under /tmp, never in the repository) has the shape
# `cdk synth` writes: manifest.json, a stack template, an asset manifest,
# and a Lambda-style asset folder holding one 200 MiB incompressible file
# (a bundled jar or zip) plus a small handler. Each round runs both tools
# back to back on a warm page cache; the script prints every run and then
# the medians: wall time, peak RSS (/usr/bin/time -v) and output size.
#
# Usage: bench/cdk.sh [ROUNDS]         (default 5)
# Env:   BENCH_DIR (default /tmp/assemble-bench), ASSET_MIB (default 200).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
dir=${BENCH_DIR:-/tmp/assemble-bench}
mib=${ASSET_MIB:-200}
out_dir=$dir/cdk-$mib/cdk.out
done_mark=$dir/cdk-$mib/.complete # beside the cdk.out, not in it

if [ ! -x /usr/bin/time ]; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y -qq time >/dev/null; else sudo apt-get install -y -qq time >/dev/null; fi
fi
command -v zip >/dev/null || { echo "bench: zip is not installed (apt-get install zip)" >&2; exit 1; }

if [ ! -f "$done_mark" ]; then
  rm -rf "$out_dir"
  asset=asset.4f2b0c1d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c
  mkdir -p "$out_dir/$asset"
  head -c "$((mib * 1048576))" /dev/urandom > "$out_dir/$asset/bundle.jar"
  echo 'exports.handler = async () => ({ statusCode: 200 });' > "$out_dir/$asset/index.js"
  echo '{"version":"55.0.0"}' > "$out_dir/cdk.out"
  cat > "$out_dir/Bench.template.json" <<'JSON'
{"Resources": {"Fn": {"Type": "AWS::Lambda::Function", "Properties": {"Handler": "index.handler", "Runtime": "java21"}}}}
JSON
  cat > "$out_dir/Bench.assets.json" <<JSON
{"version": "55.0.0", "files": {
  "4f2b": {"displayName": "Fn/Code", "source": {"path": "$asset", "packaging": "zip"},
    "destinations": {"d": {"bucketName": "cdk-hnb659fds-assets-\${AWS::AccountId}-\${AWS::Region}", "objectKey": "4f2b.zip"}}},
  "t": {"displayName": "Bench Template", "source": {"path": "Bench.template.json", "packaging": "file"},
    "destinations": {"d": {"bucketName": "cdk-hnb659fds-assets-\${AWS::AccountId}-\${AWS::Region}", "objectKey": "t.json"}}}
}, "dockerImages": {}}
JSON
  cat > "$out_dir/manifest.json" <<'JSON'
{"version": "55.0.0", "artifacts": {
  "Bench.assets": {"type": "cdk:asset-manifest", "properties": {"file": "Bench.assets.json"}},
  "Bench": {"type": "aws:cloudformation:stack", "environment": "aws://unknown-account/unknown-region",
    "properties": {"templateFile": "Bench.template.json"}, "dependencies": ["Bench.assets"]}
}}
JSON
  touch "$done_mark"
fi

bin=$dir/assemble
go build -o "$bin" ./cmd/assemble
out=$dir/out-cdk
mkdir -p "$out"
echo "cdk.out: $out_dir ($(du -sh --apparent-size "$out_dir" | cut -f1)); $(nproc) cores"
find "$out_dir" -type f -exec cat {} + >/dev/null # warm the page cache for both tools

. bench/lib.sh # run NAME TARGET CMD...

: > "$out/results.txt"
for i in $(seq "$rounds"); do
  echo "round $i"
  run assemble "$out/cdk.cloud" env SOURCE_DATE_EPOCH= "$bin" build -o "$out/cdk.cloud" "$out_dir"
  run zip "$out/cdk.zip" sh -c "cd '$out_dir' && exec zip -q -r -6 '$out/cdk.zip' ."
done

python3 - "$out/results.txt" "$mib" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for tool in ("assemble", "zip"):
    r = [x for x in rows if x[0] == tool]
    med[tool] = [statistics.median(float(x[i]) for x in r) for i in (1, 2, 3)]
a, z = med["assemble"], med["zip"]
print("\nmedians over %d rounds, cdk.out with a %s MiB asset" % (len(rows) // 2, sys.argv[2]))
for tool, (s, rss, size) in med.items():
    print("  %-9s %8.2f s  %7.1f MiB peak RSS  %12d bytes" % (tool, s, rss / 1024, size))
print("  speed-up: %.2fx vs zip -r -6; size %+.2f%%" % (z[0] / a[0], (a[2] / z[2] - 1) * 100))
PY
