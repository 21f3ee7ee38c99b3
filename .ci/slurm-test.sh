#!/usr/bin/env bash
# A real Slurm test of the sharded grid: starts a one-node Slurm cluster on
# localhost (munged, slurmctld and slurmd, with a slurm.conf written into a
# temporary folder; nothing under /etc is touched), submits a tiny
# gelu-vs-relu grid through the shipped sbatch script as a job array of 4
# tasks, merges, and compares the output with the same grid run in one
# process, byte for byte. With Open MPI installed it then trains one run
# data-parallel as a job of 2 tasks (the shipped -dist script, srun
# --mpi=pmix) and compares it with the same run under mpirun -np 2. Every
# daemon it started is stopped on exit.
#
# It installs nothing (.ci/run installs slurm-wlm and munge) and needs root
# (the daemons run as root here). It skips, saying why and exiting 0, when
# Slurm or munge is missing, it is not root, or the daemons do not start.
# Run from anywhere: .ci/slurm-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

skip() {
	echo "slurm-test: SKIP: $*"
	exit 0
}
for cmd in munged slurmctld slurmd sbatch sinfo squeue scontrol; do
	command -v "$cmd" >/dev/null 2>&1 || skip "$cmd not installed (apt-get install slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "needs root to run the Slurm daemons"

T=$(mktemp -d /tmp/slurm-test.XXXXXX)
chmod 0700 "$T"
pids=()
cleanup() {
	local rc=$?
	# Jobs first (their tasks are children of slurmd), then the daemons,
	# newest first; only the processes this script started.
	if [ -f "$T/slurm.conf" ]; then
		SLURM_CONF=$T/slurm.conf scancel --quiet --user=root >/dev/null 2>&1 || true
	fi
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill "${pids[i]}" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
	done
	if [ "$rc" != 0 ]; then
		for log in "$T"/*.log "$T"/logs/*; do
			[ -f "$log" ] && { echo "---- $log"; tail -n 30 "$log"; }
		done
	fi
	rm -rf "$T"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The program, built first: the tasks only run it.
echo "== building gelu-vs-relu"
go build -o "$T/gelu-vs-relu" ./examples/gelu-vs-relu

# munged with its own key and socket.
mkdir -m 0700 "$T/munge"
head -c 1024 /dev/urandom >"$T/munge/munge.key"
chmod 0400 "$T/munge/munge.key"
munged --key-file="$T/munge/munge.key" --socket="$T/munge/munge.socket" --pid-file="$T/munge/munged.pid" \
	--log-file="$T/munged.log" --seed-file="$T/munge/munged.seed" --force ||
	skip "munged did not start: $(tail -n 3 "$T/munged.log" 2>/dev/null)"
for _ in $(seq 50); do [ -s "$T/munge/munged.pid" ] && break; sleep 0.1; done
[ -s "$T/munge/munged.pid" ] || skip "munged wrote no pid file"
pids+=("$(cat "$T/munge/munged.pid")")

# Free-looking ports, so that a Slurm already on this machine is left alone.
port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		(echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}
ctl_port=$(port)
d_port=$(port)
while [ "$d_port" = "$ctl_port" ]; do d_port=$(port); done
host=$(hostname -s)
mkdir -p "$T/state" "$T/spool" "$T/logs" "$T/single" "$T/sharded"
cat >"$T/slurm.conf" <<EOF
ClusterName=citest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctl_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
PlugStackConfig=$T/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=citest-node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ci Nodes=citest-node Default=YES MaxTime=INFINITE State=UP
EOF
: >"$T/plugstack.conf"
export SLURM_CONF=$T/slurm.conf

echo "== starting slurmctld and slurmd (ports $ctl_port, $d_port)"
# -D keeps them in the foreground, so that $! is the daemon itself.
slurmctld -D -i -f "$SLURM_CONF" >>"$T/slurmctld.log" 2>&1 &
pids+=("$!")
slurmd -D -N citest-node -f "$SLURM_CONF" >>"$T/slurmd.log" 2>&1 &
pids+=("$!")
state=
for _ in $(seq 100); do
	state=$(sinfo -h -n citest-node -o %T 2>/dev/null || true)
	[ "$state" = idle ] && break
	sleep 0.2
done
if [ "$state" != idle ]; then
	for log in "$T/slurmctld.log" "$T/slurmd.log"; do echo "---- $log"; tail -n 15 "$log"; done
	skip "the Slurm node did not become idle (state '${state:-none}')"
fi

# A tiny grid: 2 activations × 2 optimizers × 2 seeds = 8 runs of one
# epoch on 1000 images; every process gets the same arguments.
script=$root/examples/gelu-vs-relu/cluster/gelu-vs-relu.sbatch
tiny=(-epochs 1 -seeds 2 -acts relu,gelu -train-n 1000 -test-n 300 -val 200 -layers 2 -width 16 -dpi 30 -quiet)
export GELU_BIN=$T/gelu-vs-relu GELU_OUT=out GELU_WORKERS=1

echo "== one process"
(cd "$T/single" && bash "$script" "${tiny[@]}")

echo "== a job array of 4 tasks"
start=$SECONDS
timeout 300 sbatch --wait --array=0-3 --cpus-per-task=1 --chdir="$T/sharded" --output="$T/logs/task-%a.log" \
	--export=ALL "$script" "${tiny[@]}"
echo "job array finished in $((SECONDS - start)) s"
cat "$T"/logs/task-*.log
for i in 0 1 2 3; do
	grep -q "shard $i/4 done\|wrote out/report.md" "$T/logs/task-$i.log" || { echo "task $i did not run its shard"; exit 1; }
done

echo "== merge"
(cd "$T/sharded" && bash "$script" "${tiny[@]}" -merge)

echo "== compare (timing.csv has wall times; grid.json records the shard count, reporter.json the shard that made the report)"
diff -r -x timing.csv -x grid.json -x reporter.json "$T/single/out" "$T/sharded/out"
[ -f "$T/sharded/out/runs/grid.json" ] || { echo "no grid.json: the tasks did not run as shards"; exit 1; }
n=$(find "$T/single/out" -type f | wc -l)
echo "== $n files identical between one process and 4 Slurm array tasks"

# One run trained data-parallel by the 2 tasks of a job, started by the
# shipped script with srun --mpi=pmix, against the same run as 2 ranks of
# mpirun outside Slurm: with 2 ranks every sum of two gradients is the
# same bits in either order, so the files must be identical.
if ! command -v mpirun >/dev/null 2>&1; then
	echo "slurm-test: the data-parallel run is skipped: mpirun is not installed (apt-get install openmpi-bin)"
elif ! ldconfig -p | grep -q 'libpmix\.so '; then
	echo "slurm-test: the data-parallel run is skipped: Slurm's PMIx plugin (srun --mpi=pmix) loads libpmix.so (apt-get install libpmix-dev)"
else
	dscript=$root/examples/gelu-vs-relu/cluster/gelu-vs-relu-dist.sbatch
	dtiny=(-epochs 1 -train-n 1000 -test-n 300 -val 0 -layers 2 -width 16 -batch 64 -quiet)
	mkdir -p "$T/dist" "$T/mpirun"
	echo "== a data-parallel run: 2 Slurm tasks (srun --mpi=pmix)"
	start=$SECONDS
	GELU_OUT=out/gelu-vs-relu-dist timeout 300 sbatch --wait --ntasks=2 --cpus-per-task=1 --chdir="$T/dist" --output="$T/logs/dist.log" \
		--export=ALL "$dscript" "${dtiny[@]}"
	echo "data-parallel job finished in $((SECONDS - start)) s"
	cat "$T/logs/dist.log"
	grep -q "on 2 processes; test error" "$T/logs/dist.log" || { echo "the Slurm job did not train on 2 processes"; exit 1; }
	echo "== the same run as mpirun -np 2"
	(cd "$T/mpirun" && timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 "$GELU_BIN" \
		-full -opts adam -acts gelu -seeds 1 -out out/gelu-vs-relu-dist "${dtiny[@]}")
	diff -r "$T/dist/out/gelu-vs-relu-dist" "$T/mpirun/out/gelu-vs-relu-dist"
	echo "== the data-parallel run's $(find "$T/dist/out" -type f | wc -l) files identical under srun and mpirun"
fi
echo "slurm-test: PASS"
