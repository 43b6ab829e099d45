#!/usr/bin/env bash
# Memory before authentication (issue #11 defect 7): peak RSS of assemble on
# hostile inputs, each of which must stay under 256 MiB.
#
# Makes its inputs under $BENCH_DIR (default /tmp/assemble-bench-hostile)
# with bench/mkhostile, then runs every command REPS times (default 3) under
# /usr/bin/time -v and prints the median wall time and peak RSS, the exit
# code and the first line of the error:
#   names.cloud      unsigned, 131,072 long names and comments (~550 MB):
#                    verify, inspect, verify --allow-unsigned
#   directory.cloud  unsigned, the largest names and central directory the
#                    limits accept: verify --allow-unsigned, inspect
#   fanout/          modules including modules, 10 per level, 5 levels: package
#   bomb/            a YAML alias bomb (9^9 nodes): package
#   dense/           dense flow lists ([x,x,...]) as large as each file limit
#                    allows: a template and a module (8 MiB): package; an
#                    assembly.yaml (16 MiB): build; a blueprint (4 MiB):
#                    blueprint validate; and limit.yaml, the longest list
#                    yamlpos.MaxNodes accepts: package (succeeds)
#   insertfile/      issue 19 item 8: an anchor on an Fn::InsertFile of a
#                    1 MB file and 79 or 4,000 aliases of it: package
#   schemas/         issue 19 item 9: a definition D = oneOf [$ref D, $ref D]
#                    and a chain of 40 doubling definitions, each with a
#                    pointer that does not resolve: schema validate
#   regex/           issue 19 item 10: 10 template keys against the
#                    patternProperties pattern ^(a+)+$: build --schemas
#   keycopies.gpg    one public key copied 69,000 times (16 MiB, issue 19
#                    item 11): verify --keyring keycopies.gpg signed.cloud
#                    (succeeds; under 2 s)
# ROWS=REGEX runs only the rows whose name matches (and then does not make
# the large archives), e.g. ROWS='insertfile|schemas|regex|keycopies'.
# Needs: go, /usr/bin/time (apt-get install time). Exits 1 if any median
# peak RSS reaches 256 MiB, or a median wall time of the issue 19 rows
# reaches 2 s.
set -euo pipefail
cd "$(dirname "$0")/.."
D=${BENCH_DIR:-/tmp/assemble-bench-hostile}
REPS=${REPS:-3}
LIMIT_KIB=$((256 * 1024))
mkdir -p "$D"
go build -o "$D/assemble" ./cmd/assemble
go build -o "$D/mkhostile" ./bench/mkhostile
ROWS=${ROWS:-}
[ -n "$ROWS" ] || [ -f "$D/.done" ] || { "$D/mkhostile" -o "$D" -only names,directory,fanout,bomb; touch "$D/.done"; }
"$D/mkhostile" -o "$D" -only dense,keycopies,insertfile,schemas,regex # small, and follows the limits
RING=$(pwd)/fixtures/keys/trusted.asc

# measure NAME ARGS...: one run; appends "NAME<TAB>seconds<TAB>maxrss_kib<TAB>exit<TAB>error".
measure() {
  local name=$1; shift
  [[ -z "$ROWS" || "$name" =~ $ROWS ]] || return 0
  local code=0
  /usr/bin/time -v -o "$D/time.out" "$D/assemble" "$@" >/dev/null 2>"$D/err.out" || code=$?
  local sec rss
  sec=$(awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$D/time.out")
  rss=$(awk -F': ' '/Maximum resident set size/{print $2}' "$D/time.out")
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$sec" "$rss" "$code" "$(head -n1 "$D/err.out" | cut -c1-110)" >>"$D/results"
}
: >"$D/results"
cd "$D"
for i in $(seq "$REPS"); do
  measure "verify names.cloud" verify --keyring "$RING" names.cloud
  measure "inspect names.cloud" inspect names.cloud
  measure "verify --allow-unsigned names.cloud" verify --allow-unsigned names.cloud
  measure "verify --allow-unsigned directory.cloud" verify --allow-unsigned directory.cloud
  measure "inspect directory.cloud" inspect directory.cloud
  measure "package fanout/template.yaml" package -o "$D/out.yaml" fanout/template.yaml
  measure "package bomb/template.yaml" package -o "$D/out.yaml" bomb/template.yaml
  measure "package dense/template.yaml" package -o "$D/out.yaml" dense/template.yaml
  measure "package dense/module/template.yaml" package -o "$D/out.yaml" dense/module/template.yaml
  measure "build dense/project" build -o "$D/out.cloud" dense/project
  measure "blueprint validate dense/blueprint.yaml" blueprint validate dense/blueprint.yaml
  measure "package dense/limit.yaml" package -o "$D/out.yaml" dense/limit.yaml
  measure "verify --keyring keycopies.gpg" verify --keyring keycopies.gpg signed.cloud
  measure "package insertfile/t79.yaml" package -o "$D/out.yaml" insertfile/t79.yaml
  measure "package insertfile/t4000.yaml" package -o "$D/out.yaml" insertfile/t4000.yaml
  measure "schema validate schemas/loop.json" schema validate schemas/loop.json
  measure "schema validate schemas/chain.json" schema validate schemas/chain.json
  measure "build --schemas regex/template.yaml" build --schemas regex/schemas --environment aws://123456789012/eu-west-1 -o "$D/out.cloud" regex/template.yaml
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
awk -F'\t' -v limit="$LIMIT_KIB" -v timed='^(package insertfile|schema validate|build --schemas|verify --keyring keycopies)' '
  { if (!($1 in order)) { order[$1] = ++n; names[n] = $1 }
    t[$1, ++c[$1]] = $2; r[$1, c[$1]] = $3; code[$1] = $4; err[$1] = $5 }
  function median(a, name, k,   i, j, v, m, tmp) {
    m = c[name]
    for (i = 1; i <= m; i++) v[i] = a[name, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] + 0 < v[i] + 0) { tmp = v[i]; v[i] = v[j]; v[j] = tmp }
    return v[int((m + 1) / 2)]
  }
  END {
    printf "%-42s %9s %12s %5s  %s\n", "input", "wall s", "peak RSS MiB", "exit", "error"
    bad = 0
    for (i = 1; i <= n; i++) {
      name = names[i]; rss = median(r, name); sec = median(t, name)
      if (rss + 0 >= limit) bad = 1
      if (name ~ timed && sec + 0 >= 2) slow = 1
      printf "%-42s %9.2f %12.1f %5s  %s\n", name, sec, rss / 1024, code[name], err[name]
    }
    if (bad) { print "FAIL: a median peak RSS reached 256 MiB"; exit 1 }
    if (slow) { print "FAIL: a median wall time of the issue 19 rows reached 2 s"; exit 1 }
    print "ok: every median peak RSS is under 256 MiB, the issue 19 rows under 2 s"
  }' "$D/results"
