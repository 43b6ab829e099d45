#!/usr/bin/env bash
# Benchmark local artifacts (issue 21): `assemble build --asset-bucket` of a
# template with 200 Lambda functions, each with a 1 MiB source folder,
# against `aws cloudformation package --s3-bucket` (aws-cli, uploading to a
# moto_server this script starts on loopback), side by side in one run.
#
# The project (made here, under /tmp, never in the repository) holds
# template.yaml and fn000..fn199/, each 16 source-like text files of 64 KiB
# made from a seeded generator. Each round runs both tools back to back on a
# warm page cache; aws-cli runs with --force-upload (what a pipeline does
# after a fresh clone: its zips carry file times, so their MD5 keys change
# and every artifact is uploaded again). assemble build zips, hashes and
# writes the signed-ready .cloud; the upload happens at deploy. The script
# then checks that a second build, and a build after touching every file,
# are byte-identical to the first, and prints medians: wall time, peak RSS
# (/usr/bin/time -v), output size.
#
# Usage: bench/artifacts.sh [ROUNDS]     (default 3)
# Env:   BENCH_DIR (default /tmp/assemble-bench), FUNCTIONS (default 200),
#        FOLDER_KIB (default 1024).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
dir=${BENCH_DIR:-/tmp/assemble-bench}
n=${FUNCTIONS:-200}
kib=${FOLDER_KIB:-1024}
proj=$dir/artifacts-$n-$kib
out=$dir/out-artifacts
mkdir -p "$out"

if [ ! -x /usr/bin/time ]; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y -qq time >/dev/null; else sudo apt-get install -y -qq time >/dev/null; fi
fi
command -v aws >/dev/null || { echo "bench: the aws CLI is not installed" >&2; exit 1; }
command -v moto_server >/dev/null || { echo "bench: moto_server is not installed" >&2; exit 1; }

if [ ! -f "$proj/.complete" ]; then
  rm -rf "$proj"
  python3 - "$proj" "$n" "$kib" <<'PY'
import os, random, sys
out, n, kib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
words = ("const let function return async await import export from require module "
         "handler event context request response status body headers json parse "
         "string number object array map filter reduce promise then catch error "
         "log info debug table bucket queue topic item key value index length").split()
tmpl = ["AWSTemplateFormatVersion: '2010-09-09'", "Resources:"]
per_file = kib * 1024 // 16
for i in range(n):
    r = random.Random(i)
    fn = os.path.join(out, "fn%03d" % i)
    for j in range(16):
        sub = os.path.join(fn, "lib" if j % 2 else "", "m%02d.js" % j)
        os.makedirs(os.path.dirname(sub), exist_ok=True)
        lines, size = [], 0
        while size < per_file:
            line = "  %s %s_%d = %s(%s);" % (r.choice(words), r.choice(words), r.randrange(10000), r.choice(words), ", ".join(r.sample(words, 3)))
            lines.append(line)
            size += len(line) + 1
        with open(sub, "w") as f:
            f.write("\n".join(lines)[:per_file])
    tmpl += ["  Fn%03d:" % i, "    Type: AWS::Lambda::Function", "    Properties:",
             "      Handler: m00.handler", "      Runtime: nodejs20.x",
             "      Role: arn:aws:iam::123456789012:role/bench", "      Code: fn%03d" % i]
with open(os.path.join(out, "template.yaml"), "w") as f:
    f.write("\n".join(tmpl) + "\n")
PY
  touch "$proj/.complete"
fi

bin=$dir/assemble
go build -o "$bin" ./cmd/assemble

# A moto_server of our own, on a free loopback port, for aws-cli.
moto_log=$out/moto.log
moto_server -H 127.0.0.1 -p 0 >"$moto_log" 2>&1 &
moto_pid=$!
trap 'kill $moto_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  endpoint=$(grep -o 'http://127.0.0.1:[0-9]*' "$moto_log" | head -1 || true)
  [ -n "$endpoint" ] && curl -fs "$endpoint/moto-api/" >/dev/null 2>&1 && break
  sleep 0.2
done
[ -n "$endpoint" ] || { echo "bench: moto_server did not start" >&2; exit 1; }
export AWS_ENDPOINT_URL=$endpoint AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
unset AWS_PROFILE AWS_SESSION_TOKEN
aws s3api create-bucket --bucket bench-assets >/dev/null

echo "project: $proj ($n functions, $(du -sh --apparent-size "$proj" | cut -f1)); $(nproc) cores; moto at $endpoint"
find "$proj" -type f -exec cat {} + >/dev/null # warm the page cache for both tools

. bench/lib.sh # run NAME TARGET CMD...

# cpu NAME: the CPU seconds (user + system) of the last run, appended to
# $out/cpu.txt: on a shared machine wall time swings with the load.
cpu() {
  awk -F': ' -v n="$1" '/User time|System time/ {s += $2} END {printf "%s %.2f\n", n, s}' "$out/time.txt" >> "$out/cpu.txt"
}

: > "$out/results.txt"
: > "$out/cpu.txt"
for i in $(seq "$rounds"); do
  echo "round $i"
  run assemble "$out/app-$i.cloud" "$bin" build --environment aws://123456789012/us-east-1 --asset-bucket bench-assets -o "$out/app-$i.cloud" "$proj/template.yaml"
  cpu assemble
  run aws-cli "$out/aws-packaged.yaml" sh -c "cd '$proj' && exec aws cloudformation package --template-file template.yaml --s3-bucket bench-assets --force-upload --output-template-file '$out/aws-packaged.yaml' 2>/dev/null"
  cpu aws-cli
done

# Reproducible: every build gave the same bytes; so does one after every
# file's time changed.
for i in $(seq 2 "$rounds"); do cmp "$out/app-1.cloud" "$out/app-$i.cloud"; done
find "$proj" -type f -exec touch -d '+1 day' {} +
"$bin" build --environment aws://123456789012/us-east-1 --asset-bucket bench-assets -o "$out/touched.cloud" "$proj/template.yaml" >/dev/null
cmp "$out/app-1.cloud" "$out/touched.cloud"
echo "byte-identical: $rounds builds and a build after touching every file ($(sha256sum "$out/app-1.cloud" | cut -c1-16))"

python3 - "$out/results.txt" "$out/cpu.txt" "$n" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
cpus = [l.split() for l in open(sys.argv[2])]
med, cpu = {}, {}
for tool in ("assemble", "aws-cli"):
    r = [x for x in rows if x[0] == tool]
    med[tool] = [statistics.median(float(x[i]) for x in r) for i in (1, 2, 3)]
    cpu[tool] = statistics.median(float(x[1]) for x in cpus if x[0] == tool)
a, c = med["assemble"], med["aws-cli"]
print("\nmedians over %d rounds, %s Lambda functions (load average %s)" % (len(rows) // 2, sys.argv[3], open("/proc/loadavg").read().split()[0]))
for tool, (s, rss, size) in med.items():
    print("  %-9s %8.2f s wall  %7.2f s CPU  %7.1f MiB peak RSS  %12d bytes" % (tool, s, cpu[tool], rss / 1024, size))
print("  speed-up: %.1fx wall, %.1fx CPU vs aws cloudformation package (target 10x)" % (c[0] / a[0], cpu["aws-cli"] / cpu["assemble"]))
PY
