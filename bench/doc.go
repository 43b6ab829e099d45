// Package bench holds the build benchmarks: `go test -bench . ./bench`
// for a quick in-process comparison, and build.sh for the full-size run
// against zip -r -6 (see the script's header).
package bench
