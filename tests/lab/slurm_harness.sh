#!/bin/bash
# A real Slurm on one machine: slurmctld and one slurmd per emulated host, each host a network namespace with its own
# address on a bridge. Runs Chorus jobs the ways docs/launching.md gives for Slurm:
#   - srun -N 2 --ntasks-per-node 2 --mpi=pmix chorus-perf (no store named: its address goes through PMIx)
#   - sbatch with the batch script of docs/launching.md
#   - srun --mpi=none with CHORUS_STORE (SLURM_PROCID/SLURM_NTASKS)
# Installs nothing: needs root, iproute2, munge and slurm-wlm (slurmctld, slurmd, srun, sbatch); else exits 77.
# Everything it starts (munged, the daemons, the jobs' processes, the namespaces, its directory) goes at exit, also
# when a step fails or the harness is killed by SIGTERM or SIGINT.
# Usage: tests/lab/slurm_harness.sh BUILD_DIR
set -u

build=$(cd "${1:?usage: slurm_harness.sh BUILD_DIR}" && pwd)
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
perf=$build/perf/chorus-perf
step_seconds=90  # bound on each job; the whole harness stays under about 5 minutes

skip() {
  echo "slurm_harness: skipped: $*"
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, slurmd)"
for tool in ip nsenter unshare slurmctld slurmd srun sbatch scontrol munged; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (Debian: iproute2, slurm-wlm, munge)"
done
[ -x "$perf" ] || skip "$perf is not built"

tag=chs$$
# Not under /tmp: each host gets a /tmp of its own (below), as real hosts have.
dir=$(mktemp -d "/run/chorus-slurm-$tag-XXXXXX")
subnet=10.213.$(($$ % 250)).
ctl_ns=$tag-ctl
nodes=(node1 node2)
namespaces=("$ctl_ns")
munged_pid=""

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  # The daemons and every process of the jobs live in the namespaces: end them all, then the namespaces.
  for ns in "${namespaces[@]}"; do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -n "$pids" ] && kill -TERM $pids 2>/dev/null
  done
  for _ in $(seq 50); do
    left=""
    for ns in "${namespaces[@]}"; do left+=$(ip netns pids "$ns" 2>/dev/null); done
    [ -z "$left" ] && break
    sleep 0.1  # polling for exits, not synchronizing with them
  done
  for ns in "${namespaces[@]}"; do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  [ -n "$munged_pid" ] && kill "$munged_pid" 2>/dev/null && wait "$munged_pid" 2>/dev/null
  if [ "$status" != 0 ] && [ "$status" != 77 ]; then
    for log in "$dir"/*.log; do
      [ -f "$log" ] && { echo "---- $(basename "$log") (last lines)"; tail -n 15 "$log"; }
    done
  fi
  rm -rf "$dir"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
  echo "slurm_harness: FAILED: $*"
  exit 1
}

# The network: a bridge in the controller's namespace, one veth to each host's namespace.
ip netns add "$ctl_ns" || fail "ip netns add $ctl_ns"
ip -n "$ctl_ns" link set lo up
ip -n "$ctl_ns" link add br0 type bridge
ip -n "$ctl_ns" addr add "${subnet}1/24" dev br0
ip -n "$ctl_ns" link set br0 up
node_lines=""
for i in "${!nodes[@]}"; do
  ns=$tag-${nodes[$i]}
  addr=$subnet$((11 + i))
  ip netns add "$ns" || fail "ip netns add $ns"
  namespaces+=("$ns")
  ip -n "$ns" link set lo up
  ip link add "$tag-v$i" netns "$ctl_ns" type veth peer name eth0 netns "$ns" || fail "veth for $ns"
  ip -n "$ctl_ns" link set "$tag-v$i" master br0 up
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
  node_lines+="NodeName=${nodes[$i]} NodeAddr=$addr CPUs=2 State=UNKNOWN"$'\n'
done

# munge: its own key and socket, so that nothing of the machine's is used or changed.
head -c 1024 /dev/urandom >"$dir/munge.key"
chmod 600 "$dir/munge.key"
munged --foreground --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" >"$dir/munged.out.log" 2>&1 &
munged_pid=$!

mkdir -p "$dir/state" "$dir/spool"
export SLURM_CONF=$dir/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=chorus-lab
SlurmctldHost=$(hostname -s)(${subnet}1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
$node_lines
PartitionName=lab Nodes=$(IFS=,; echo "${nodes[*]}") Default=YES MaxTime=5 State=UP
EOF

in_ctl() { nsenter --net=/run/netns/"$ctl_ns" "$@"; }
in_ctl slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out.log" 2>&1 &
for node in "${nodes[@]}"; do
  mkdir -p "$dir/spool/$node" "$dir/tmp/$node/upper" "$dir/tmp/$node/work"
  # A /tmp per host: Slurm's PMIx plugin makes /tmp/spmix_appdir_<uid>_<job>.<step> on every host of a step. An
  # overlay, so that what is already in /tmp (a build tree, a clone) stays visible to the host's tasks.
  nsenter --net=/run/netns/"$tag-$node" unshare --mount --propagation private \
    sh -c "mount -t overlay overlay -o 'lowerdir=/tmp,upperdir=$dir/tmp/$node/upper,workdir=$dir/tmp/$node/work' /tmp \
           && exec slurmd -D -N '$node' -f '$SLURM_CONF'" \
    >"$dir/slurmd.$node.out.log" 2>&1 &
done
# Wait (bounded) until both nodes are idle: polled through scontrol, the daemons' own report.
for _ in $(seq 120); do
  idle=$(in_ctl sinfo -h -N -o "%N %t" 2>/dev/null | grep -c " idle")
  [ "$idle" = "${#nodes[@]}" ] && break
  sleep 0.5
done
[ "$idle" = "${#nodes[@]}" ] || fail "the nodes did not come up: $(in_ctl sinfo -N 2>&1)"
echo "slurm_harness: slurmctld and ${#nodes[@]} slurmd up ($(in_ctl sinfo -h -N -o '%N@%o' | tr '\n' ' '))"

# Each task names its host, so that Chorus sees two hosts (the machine's own identity is one).
host_wrapped="CHORUS_HOST_ID=\$SLURMD_NODENAME exec"
perf_args="allreduce -b 8 -e 1M -f 4 -n 20"
results=()

step() {
  local name=$1
  shift
  echo "== $name"
  if timeout -k 5 "$step_seconds" "$@" >"$dir/step.out" 2>&1; then
    cat "$dir/step.out"
    results+=("$name: ok")
  else
    local rc=$?
    cat "$dir/step.out"
    results+=("$name: FAILED (exit $rc)")
    failed=1
  fi
}
failed=0

if in_ctl srun --mpi=list 2>&1 | grep -q pmix; then
  step "srun -N 2 --ntasks-per-node 2 --mpi=pmix, no store named" \
    nsenter --net=/run/netns/"$ctl_ns" srun -N 2 --ntasks-per-node 2 --mpi=pmix -t 2 sh -c "$host_wrapped $perf $perf_args"
  # The batch script of docs/launching.md, with the application replaced by chorus-perf.
  sed -n '/^<!-- slurm batch script -->$/,/^```$/p' "$source_dir/docs/launching.md" | sed '1,2d;$d' |
    sed "s|./app|sh -c '$host_wrapped $perf $perf_args'|" >"$dir/batch.sh"
  grep -q '^#SBATCH' "$dir/batch.sh" || fail "no batch script found in docs/launching.md"
  step "sbatch (docs/launching.md's script)" \
    nsenter --net=/run/netns/"$ctl_ns" sbatch --wait -o "$dir/batch.out" "$dir/batch.sh"
  echo "-- batch job output"
  cat "$dir/batch.out" 2>/dev/null
  grep -q "chorus-perf allreduce: nranks 4" "$dir/batch.out" 2>/dev/null || { results+=("sbatch output: FAILED (no results)"); failed=1; }
else
  results+=("srun --mpi=pmix: not run (this Slurm has no pmix plugin: srun --mpi=list)")
fi
# Without PMIx: SLURM_PROCID/SLURM_NTASKS and a store rank 0 (on the first node) serves.
step "srun --mpi=none with CHORUS_STORE" \
  nsenter --net=/run/netns/"$ctl_ns" env CHORUS_STORE="${subnet}11:29517" srun -N 2 --ntasks-per-node 2 --mpi=none -t 2 \
  sh -c "$host_wrapped $perf $perf_args"

echo "== summary"
printf '%s\n' "${results[@]}"
[ "$failed" = 0 ] || fail "a step failed"
echo "slurm_harness: all steps passed"
