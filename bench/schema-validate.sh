#!/bin/sh
# Times `assemble schema validate --json` over the 1,665 published resource
# schemas in ../shared/corpus (whole process: start-up, meta-schema compile,
# parallel validation), several runs, and prints each and the median.
# Usage: bench/schema-validate.sh [RUNS]   (from the repository root)
set -eu
runs=${1:-5}
dir=../shared/corpus/resource-schemas/corpus/aws-cloudformation-schema
[ -d "$dir" ] || { echo "corpus not found: $dir" >&2; exit 1; }
bin=$(mktemp -d)/assemble
go build -o "$bin" ./cmd/assemble
times=""
i=0
while [ "$i" -lt "$runs" ]; do
	start=$(date +%s.%N)
	"$bin" schema validate --json "$dir"/*.json >/dev/null
	end=$(date +%s.%N)
	t=$(echo "$end - $start" | bc)
	echo "run $((i + 1)): ${t}s"
	times="$times $t"
	i=$((i + 1))
done
echo "$times" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print "median: " a[int((NR+1)/2)] "s over " NR " runs"}'
rm -rf "$(dirname "$bin")"
