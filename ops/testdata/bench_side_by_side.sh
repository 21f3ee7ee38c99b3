#!/bin/sh
# Side-by-side throughput of this project's GELU kernels and PyTorch's on
# the same workloads (4M elements; see ../kernels_bench_test.go and
# bench_torch_activations.py), interleaved so that both see the same machine
# load. Run from anywhere; compare the best figure of each.
#
#   sh ops/testdata/bench_side_by_side.sh [rounds]
set -e
cd "$(dirname "$0")/../.."
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
go test -c -o "$bin" ./ops
for i in $(seq "${1:-3}"); do
	echo "# round $i: go"
	(cd ops && "$bin" -test.run '^$' -test.bench GELUForwardBackward -test.benchtime 20x | grep Melem)
	echo "# round $i: torch"
	/usr/bin/python3 ops/testdata/bench_torch_activations.py
done
