#!/bin/sh
# Packaging time against the number of module instances.
#
# Generates templates with ../../shared/bench/gen_modules.py (N module
# instances of a 3-resource module, a 2-level nested chain and, with K > 0, a
# ForEach of K items), builds assemble, and times `assemble package` REPS
# times per size, printing the median wall time and the time per instance.
#
# Usage: bench/modules.sh [SIZES] [REPS] [K]   (default 10,100,1000,5000 5 0)
# The Go benchmark is: go test ./bench -bench Modules -count 5
set -eu
here=$(cd "$(dirname "$0")" && pwd)
gen="$here/../../shared/bench/gen_modules.py"
sizes=${1:-10,100,1000,5000}
reps=${2:-5}
k=${3:-0}
[ -f "$gen" ] || { echo "bench: $gen not found" >&2; exit 1; }
work=$(mktemp -d /tmp/assemble-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$gen" --out "$work/data" --sizes "$sizes" --k "$k" >/dev/null
(cd "$here/.." && go build -o "$work/assemble" ./cmd/assemble)
echo "N	median_s	per_instance_ms	runs_s"
for n in $(echo "$sizes" | tr ',' ' '); do
	runs=""
	i=0
	while [ "$i" -lt "$reps" ]; do
		s=$(python3 -c 'import sys,time,subprocess
t=time.perf_counter()
subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL)
print("%.3f"%(time.perf_counter()-t))' "$work/assemble" package --output "$work/out.yaml" "$work/data/n$n/template.yaml")
		runs="$runs $s"
		i=$((i + 1))
	done
	want=$(sed -n 's/^resources //p' "$work/data/n$n/expect.txt")
	got=$(grep -c '^    Type: AWS::' "$work/out.yaml")
	[ "$got" = "$want" ] || { echo "bench: N=$n packaged $got resources, want $want" >&2; exit 1; }
	echo "$runs" | python3 -c 'import sys,statistics
n=int(sys.argv[1]); r=[float(x) for x in sys.stdin.read().split()]
m=statistics.median(r)
print("%d\t%.3f\t%.3f\t%s"%(n,m,1000*m/max(n,1)," ".join("%.3f"%x for x in r)))' "$n"
done
