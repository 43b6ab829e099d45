#!/bin/sh
# Times `assemble schema validate --json` over the 1,665 published resource
# schemas in ../shared/corpus (whole process: start-up, meta-schema compile,
# parallel validation), several runs; prints each run and the medians of
# wall-clock and CPU (user+sys) seconds, with the load average, since the
# machine is shared. Usage: bench/schema-validate.sh [RUNS]  (from the repo root)
set -eu
runs=${1:-5}
dir=../shared/corpus/resource-schemas/corpus/aws-cloudformation-schema
[ -d "$dir" ] || { echo "corpus not found: $dir" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/assemble" ./cmd/assemble
i=0
while [ "$i" -lt "$runs" ]; do
	/usr/bin/time -f "%e %U %S" -o "$tmp/t" "$tmp/assemble" schema validate --json "$dir"/*.json >/dev/null
	read -r wall user sys <"$tmp/t"
	cpu=$(echo "$user + $sys" | bc)
	echo "run $((i + 1)): ${wall}s wall, ${cpu}s cpu"
	echo "$wall" >>"$tmp/wall"
	echo "$cpu" >>"$tmp/cpu"
	i=$((i + 1))
done
med() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median: $(med "$tmp/wall")s wall, $(med "$tmp/cpu")s cpu over $runs runs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
