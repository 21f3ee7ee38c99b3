#!/usr/bin/env bash
# The data-parallel training tests under Open MPI: train/dist's
# collectives, the Reducer in both modes and its training equivalence
# checks; the Trainer's (train) against one process, within the derived
# bound and bit for bit, its ranks stopping together, a killed rank and
# the resume after it; gelu-vs-relu's single-run mode started by mpirun;
# the test launcher's own check that a rank's skip or failure fails a job.
# They run as 2 and as 3 ranks (mpirun --allow-run-as-root --oversubscribe
# -np 2 / -np 3, started by the Go tests themselves), with the jobs in
# which a rank dies, stalls or fails, which must end promptly with a
# message. Everything runs once as usual and once with the race detector.
#
# It installs nothing (.ci/run installs openmpi-bin) and skips, saying why
# and exiting 0, when mpirun is missing; once mpirun is there the tests
# must run (GELU_DIST_REQUIRE=1 turns their skips into failures).
#
#   .ci/mpi-test.sh          the tests
#   .ci/mpi-test.sh bench    the tests, then the collectives' benchmarks
#                            as 2 ranks (under nice -n 10)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v mpirun >/dev/null 2>&1; then
	echo "mpi-test: SKIP: mpirun is not installed (apt-get install openmpi-bin)"
	exit 0
fi
echo "== $(mpirun --version | head -n 1)"
export GELU_DIST_REQUIRE=1
tests=(
	'^(TestMPI|TestDeadRank|TestStalledRank|TestFailedRank)$' ./train/dist
	'^(TestTrainMPI|TestTrainKilledRankResumes)$' ./train
	'^TestDist' ./examples/gelu-vs-relu
	'^(TestRun|TestRunRankNotPassed)$' ./train/internal/mpirun
)
for ((i = 0; i < ${#tests[@]}; i += 2)); do
	run=${tests[i]} pkg=${tests[i + 1]}
	echo "== go test $pkg"
	go test -count=1 -v -run "$run" "$pkg" | grep -E '^(=== RUN|--- |    --- |ok|FAIL|PASS)|mpirun -np|the job|ended in'
	echo "== go test -race $pkg"
	go test -race -count=1 -run "$run" "$pkg"
done

if [ "${1:-}" = bench ]; then
	T=$(mktemp -d /tmp/mpi-test.XXXXXX)
	trap 'rm -rf "$T"' EXIT
	go test -c -o "$T/dist.test" ./train/dist
	echo "== benchmarks as 2 ranks; load: $(cut -d' ' -f1-3 /proc/loadavg); $(grep -m1 'model name' /proc/cpuinfo)"
	# Fixed iteration counts: every rank must run the same collectives.
	bench() {
		GELU_DIST_WORKER=1 nice -n 10 mpirun --allow-run-as-root --oversubscribe -np 2 -x GELU_DIST_WORKER \
			"$T/dist.test" -test.run '^$' -test.bench "$1" -test.benchtime "$2" -test.count "${3:-1}" |
			grep -E '^Benchmark'
	}
	bench '^BenchmarkAllreduce$/.*/(8B|1KiB|64KiB|1MiB)$' 500x 3
	bench '^BenchmarkIallreduceWait$' 500x 3
	bench '^BenchmarkAllreduce$/.*/(16|128)MiB$' 10x 3
	bench '^BenchmarkReducer$' 10x 3
	"$T/dist.test" -test.run '^$' -test.bench 'Copy|CheckParams' -test.count 3 | grep -E '^Benchmark'
fi
echo "mpi-test: OK"
