#!/usr/bin/env bash
# Start a private one-node Slurm cluster for tests: munged, slurmctld and
# slurmd, all state, sockets, logs and pid files under DIR, ports chosen
# free, so it neither needs nor disturbs a system Slurm or munge.
#
#   regress/slurm/start-test-cluster.sh DIR
#   export SLURM_CONF=DIR/slurm.conf     # (DIR/env has this line)
#   ... sbatch / squeue / cuport regress run --slurm ...
#   regress/slurm/stop-test-cluster.sh DIR
#
# The node `localhost` is in two partitions, `cuda` (default) and `ascend`,
# with GRES gpu:2 and npu:2 backed by links DIR/dev/{gpu,npu}[0-1] to
# /dev/null-like character devices (no accelerator needed). Exit status: 0 started, 77 Slurm or munge is
# not installed, 1 a daemon did not start (its log is printed).
set -uo pipefail

dir=${1:?usage: start-test-cluster.sh DIR}
mkdir -p "$dir" && dir=$(cd "$dir" && pwd)

for tool in munged mungekey slurmctld slurmd sbatch sinfo scontrol; do
  if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
    echo "start-test-cluster: \`$tool\` not found; install Debian's munge and slurm-wlm (apt-get install -y munge slurm-wlm)" >&2
    exit 77
  fi
done
PATH=$PATH:/usr/sbin

user=$(id -un)
mkdir -p "$dir"/{munge,munge-run,ctld,spool,log,dev}
# munged wants its key private and its socket folder open to all.
chmod 700 "$dir/munge"
chmod 755 "$dir/munge-run"
# GRES files must be character devices (else slurmd ignores them and sets
# no CUDA_VISIBLE_DEVICES): links to harmless ones, distinct per "device".
ln -sfn /dev/null "$dir/dev/gpu0"
ln -sfn /dev/zero "$dir/dev/gpu1"
ln -sfn /dev/full "$dir/dev/npu0"
ln -sfn /dev/urandom "$dir/dev/npu1"

fail() {
  echo "start-test-cluster: $1" >&2
  for log in "$dir"/log/*.log; do
    [ -s "$log" ] && { echo "--- $log" >&2; tail -n 25 "$log" >&2; }
  done
  "$(dirname "$0")/stop-test-cluster.sh" "$dir" >/dev/null 2>&1
  exit 1
}

# A port nobody listens on: bash connects to it, or fails to.
free_port() {
  local port=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  echo "$port"
}
base=$((20000 + ($$ % 200) * 50))
ctld_port=$(free_port "$base")
slurmd_port=$(free_port $((ctld_port + 1)))

# munge: a private key and socket.
mungekey -c -k "$dir/munge/munge.key" 2>"$dir/log/mungekey.log" || fail "mungekey failed"
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge-run/munge.socket" \
  --pid-file="$dir/munge-run/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/munged.seed" || fail "munged did not start"

cat >"$dir/slurm.conf" <<EOF
# Written by regress/slurm/start-test-cluster.sh
ClusterName=cuporttest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$dir/munge-run/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.log
MinJobAge=3600
ReturnToService=2
SchedulerParameters=sched_interval=1
MessageTimeout=30
GresTypes=gpu,npu
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=500 Gres=gpu:2,npu:2 State=UNKNOWN
PartitionName=cuda Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=ascend Nodes=localhost MaxTime=INFINITE State=UP
EOF
cat >"$dir/gres.conf" <<EOF
AutoDetect=off
NodeName=localhost Name=gpu File=$dir/dev/gpu[0-1]
NodeName=localhost Name=npu File=$dir/dev/npu[0-1]
EOF
# Empty cgroup.conf: slurmd reads it even with the cgroup plugins off.
: >"$dir/cgroup.conf"
echo "export SLURM_CONF=$dir/slurm.conf" >"$dir/env"
export SLURM_CONF=$dir/slurm.conf

slurmctld -f "$SLURM_CONF" -i >>"$dir/log/slurmctld.out" 2>&1 || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N localhost >>"$dir/log/slurmd.out" 2>&1 || fail "slurmd did not start"

for _ in $(seq 1 60); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null | head -n 1)
  case "$state" in
    idle) echo "start-test-cluster: up (SLURM_CONF=$SLURM_CONF, slurmctld port $ctld_port)"; exit 0 ;;
    down* | drain*) scontrol update nodename=localhost state=resume >/dev/null 2>&1 ;;
  esac
  sleep 0.5
done
fail "the node did not become idle within 30 s (last state: ${state:-none})"
