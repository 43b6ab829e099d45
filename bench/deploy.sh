#!/bin/sh
# deploy.sh [ROUNDS]: issue 20's deploy benchmarks against moto_server
# (skipped without it): a second deploy of an unchanged 20-droplet assembly
# makes no upload and executes no change set (the AWS calls counted per
# deploy), and 16 independent stacks with --concurrency 4 against 1, in
# alternating order each round, medians and their ratio (target <= 0.35),
# on moto as it is and with 50 ms added to every AWS call; beside them,
# where each run's time goes: the calls by operation, the time spent in
# them, this process's CPU and moto_server's.
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-5}
go test -run '^$' -bench 'DeployUnchanged|DeployConcurrency' -benchtime "${rounds}x" -timeout 30m ./bench
