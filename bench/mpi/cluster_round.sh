#!/usr/bin/env bash
# The cost of one cosched-cluster coordination round (docs/performance.md, "MPI"): N cosched-rm (modelled
# 2-CPU nodes, no enforcement, so that 8 of them fit on a small machine) under membus with JOBS idle jobs
# each, and `mpirun -np N cosched-cluster --quantum 0 --rounds R --timing` back to back.
#   bench/mpi/cluster_round.sh BUILD [ROUNDS] [N...]
set -euo pipefail
build=${1:?usage: cluster_round.sh BUILD [ROUNDS] [N...]}
rounds=${2:-200}
shift 2 || true
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(2 4 8)
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
dir=$(mktemp -d /tmp/cosched-bench-cluster.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
for n in "${sizes[@]}"; do
  for ((i = 0; i < n; i++)); do
    "$build/rm/cosched-rm" --foreground --socket "$dir/rm$i.sock" --topology "core:2 pu:1" --policy membus \
      --accounting none 2>"$dir/rm$i.err" &
    pids+=($!)
  done
  for ((i = 0; i < n; i++)); do
    for _ in $(seq 50); do [ -S "$dir/rm$i.sock" ] && break; sleep 0.1; done
  done
  mpirun "${root[@]}" --oversubscribe -np "$n" "$build/cluster/cosched-cluster" --socket "$dir/rm{rank}.sock" \
    --quantum 0 --rounds "$rounds" --timing
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
  rm -f "$dir"/rm*.sock
done
