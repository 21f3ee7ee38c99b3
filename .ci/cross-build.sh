#!/usr/bin/env bash
# Cross-builds and vets the module (go build ./... and go vet ./..., tests
# included) for every platform it supports, so that none breaks silently:
# code behind build tags (assembly, OpenBLAS loading, file locks) differs per
# platform, and a build on one machine sees only its own.
#
#   .ci/cross-build.sh                  every target below
#   .ci/cross-build.sh windows/arm64    only those given
#
# Not in the list: linux/riscv64 (and the other GOARCHes without assembly
# stubs in github.com/chewxy/math32 v1.10.1, a dependency of gorgonia.org/
# tensor): its riscv64 stubs file is named stubs_risc64.s and tagged
# "+build riscv", so it is never built and Sqrt, Exp, Log, Remainder have
# no body ("missing function body"). math32 v1.11.1 builds there.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=(linux/amd64 linux/arm64 linux/386 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)
fi

failed=()
for t in "${targets[@]}"; do
	os=${t%/*} arch=${t#*/}
	echo "== $t: go build ./... && go vet ./..."
	if ! GOOS=$os GOARCH=$arch CGO_ENABLED=0 go build ./... || ! GOOS=$os GOARCH=$arch CGO_ENABLED=0 go vet ./...; then
		failed+=("$t")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "cross-build failed for: ${failed[*]}"
	exit 1
fi
echo "cross-build: ${targets[*]} build and vet"
