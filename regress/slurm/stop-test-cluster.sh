#!/usr/bin/env bash
# Stop the daemons regress/slurm/start-test-cluster.sh started in DIR, by
# the pids in their pid files (slurmd, slurmctld, then munged), waiting up
# to 10 s for each and then killing it.
set -uo pipefail

dir=${1:?usage: stop-test-cluster.sh DIR}
status=0
for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge-run/munged.pid"; do
  [ -s "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  case "$pid" in '' | *[!0-9]*) continue ;; esac
  kill "$pid" 2>/dev/null || continue
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null
    echo "stop-test-cluster: $pidfile ($pid) ignored SIGTERM; killed" >&2
    status=1
  fi
  rm -f "$pidfile"
done
exit "$status"
