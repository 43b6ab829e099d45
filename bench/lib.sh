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

# make_tree TREE FILES TEXT_MIB BLOB_MIB: the build benchmarks' tree, made
# once (../shared/bench/gen_tree.py, or a stand-in of the same shape), with
# an assembly.yaml shipping it as a directory droplet and a file droplet.
make_tree() {
  if [ ! -f "$1/.complete" ]; then
    rm -rf "$1"
    gen=../shared/bench/gen_tree.py
    if [ -f "$gen" ]; then
      python3 "$gen" --out "$1" --files "$2" --text-mib "$3" --blob-mib "$4"
    else
      # No ../shared: a stand-in generator with the same shape (small YAML
      # templates of varied sizes; one incompressible blob).
      python3 - "$1" "$2" "$3" <<'PY'
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
      mkdir -p "$1/images"
      head -c "$(($4 * 1048576))" /dev/urandom > "$1/images/app-image.tar"
    fi
    cat > "$1/assembly.yaml" <<'YAML'
environment: aws://123456789012/eu-west-1
droplets:
  Templates:
    type: directory
    properties: {directory: templates, bucketName: bench-bucket}
  Image:
    type: file
    properties: {file: images/app-image.tar, bucketName: bench-bucket, objectKey: app-image.tar}
YAML
    touch "$1/.complete"
  fi
}
