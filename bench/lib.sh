# Shared by the bench/*.sh scripts (sourced, after cd to the repository).

# run NAME TARGET CMD...: one timed run of CMD, which writes TARGET; prints
# and appends "name seconds rss_kib bytes" to $out/results.txt, using
# /usr/bin/time -v (wall clock and peak RSS).
run() {
  local name=$1 target=$2; shift 2
  rm -f "$target"
  /usr/bin/time -v -o "$out/time.txt" "$@" >/dev/null
  local secs rss size
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,p,":"); s=0; for(i=1;i<=n;i++) s=s*60+p[i]; print s}' "$out/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time.txt")
  size=$(stat -c %s "$target")
  printf '%-9s %8.2f s %8.1f MiB RSS %12d bytes\n' "$name" "$secs" "$(echo "$rss/1024" | bc -l)" "$size"
  echo "$name $secs $rss $size" >> "$out/results.txt"
}
