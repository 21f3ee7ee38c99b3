#!/bin/sh
# Side-by-side throughput of this project's GELU kernels and PyTorch's on
# the same workloads (4M elements; see ../kernels_bench_test.go and
# bench_torch_activations.py), interleaved round by round so that both see
# the same machine load, then the best figure of each and their ratio.
#
#   sh ops/testdata/bench_side_by_side.sh [rounds]    # default 5
set -e
cd "$(dirname "$0")/../.."
bin=$(mktemp)
log=$(mktemp)
trap 'rm -f "$bin" "$log"' EXIT
go test -c -o "$bin" ./ops
for i in $(seq "${1:-5}"); do
	(cd ops && "$bin" -test.run '^$' -test.bench GELUForwardBackward -test.benchtime 20x) |
		awk '/Melem/ { split($1, p, "/"); sub(/-[0-9]+$/, "", p[4]); print "go", p[2], p[3], p[4], $(NF-1) }' >>"$log"
	/usr/bin/python3 ops/testdata/bench_torch_activations.py |
		awk '!/^#/ { print "torch", $1, $2, "forward", $4; print "torch", $1, $2, "backward", $6; print "torch", $1, $2, "fwd+bwd", $8 }' >>"$log"
done
printf "%-28s %10s %10s %7s   (best of each, Melem/s)\n" workload this PyTorch ratio
# "fwd+bwd*" combines the best forward and best backward, 1/(1/f + 1/b):
# the fwd+bwd run is the same work, but one noisy moment spoils it.
awk '{ k = $2 " " $3 " " $4; if ($5 > best[$1, k]) best[$1, k] = $5; keys[k] = 1 }
END {
	for (k in keys) {
		printf "%-28s %10.1f %10.1f %7.2f\n", k, best["go", k], best["torch", k], best["go", k] / best["torch", k]
		if (k ~ / forward$/) {
			b = k; sub(/ forward$/, " backward", b); c = k; sub(/ forward$/, " fwd+bwd*", c)
			g = 1 / (1 / best["go", k] + 1 / best["go", b]); t = 1 / (1 / best["torch", k] + 1 / best["torch", b])
			printf "%-28s %10.1f %10.1f %7.2f\n", c, g, t, g / t
		}
	}
}' "$log" | sort
