#!/usr/bin/env bash
# bare.sh CMD...: runs CMD as on a fresh machine that has none of the
# project's optional system packages, without uninstalling anything: in a
# private mount namespace (unshare -m, root only) it hides
#   - the OpenBLAS library (/dev/null bound over it),
#   - PyTorch's Python package (a directory whose __init__.py raises
#     ImportError bound over it),
#   - /usr/share/datasets (Fashion-MNIST),
#   - the Open MPI library,
#   - the qemu-aarch64, sbatch, srun, salloc, mpirun and mpiexec binaries.
# What is not installed needs no hiding; without root or unshare the
# command runs as it is (the machine is then as bare as it happens to be).
set -eu
[ $# -gt 0 ] || { echo "usage: bare.sh CMD..." >&2; exit 2; }
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1; then
	echo "bare.sh: not root or no unshare: running without hiding anything" >&2
	exec "$@"
fi
empty=$(mktemp -d) noimport=$(mktemp -d)
trap 'rm -rf "$empty" "$noimport"' EXIT
echo 'raise ImportError("torch is hidden by .ci/bare.sh")' >"$noimport/__init__.py"
hide=""
for lib in /usr/lib/x86_64-linux-gnu/libopenblas.so.0 /usr/lib/aarch64-linux-gnu/libopenblas.so.0 \
	/usr/lib/x86_64-linux-gnu/libmpi.so.40; do
	real=$(readlink -f "$lib" 2>/dev/null || true)
	[ -n "$real" ] && [ -f "$real" ] && hide="$hide mount --bind /dev/null '$real';"
done
for d in /usr/lib/python3/dist-packages/torch; do
	[ -d "$d" ] && hide="$hide mount --bind '$noimport' '$d';"
done
[ -d /usr/share/datasets ] && hide="$hide mount --bind '$empty' /usr/share/datasets;"
for b in qemu-aarch64 sbatch srun salloc mpirun mpiexec; do
	p=$(command -v "$b" 2>/dev/null || true)
	[ -n "$p" ] && hide="$hide mount --bind /dev/null '$p';"
done
cmd=$(printf '%q ' "$@")
unshare -m sh -c "$hide exec $cmd"
