#!/usr/bin/env bash
# What busy-polling ranks do to time sharing (docs/performance.md, "MPI"): an MPI job of 2 ranks × 2 threads
# (mpi-hybrid, a Sendrecv between the ranks every iteration) shares 2 CPUs with a 2-CPU amdahl job under
# `gang`, run twice side by side:
#   gang: the ranks register as one job (Open MPI's key): one row, both ranks run and stop together;
#   split: each rank is its own job (cosched-run --job split<rank>): three rows, a rank runs while its partner
#          is stopped and spins in MPI_Sendrecv for its whole quantum.
# Prints the MPI job's wall time and the CPU time (user + system) its two ranks consumed (/usr/bin/time).
#   bench/mpi/gang_spin.sh BUILD [ITERATIONS] [QUANTUM_MS]
set -euo pipefail
build=${1:?usage: gang_spin.sh BUILD [ITERATIONS] [QUANTUM_MS]}
iterations=${2:-40}
quantum=${3:-200}
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
dir=$(mktemp -d /tmp/cosched-bench-spin.XXXXXX)
rm_pid=
other=
cleanup() {
  [ -n "$other" ] && kill "$other" 2>/dev/null || true
  [ -n "$rm_pid" ] && kill "$rm_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
for mode in gang split; do
  COSCHED_LOCK_DIR="$dir/locks" "$build/rm/cosched-rm" --foreground --socket "$dir/rm.sock" --cpus 0-1 \
    --policy gang --quantum-ms "$quantum" --accounting none 2>"$dir/rm-$mode.err" &
  rm_pid=$!
  for _ in $(seq 50); do [ -S "$dir/rm.sock" ] && break; sleep 0.1; done
  "$build/libruntime/launcher/cosched-run" --socket "$dir/rm.sock" --request 2 --quiet -- \
    "$build/bin/amdahl-clang" --iterations 1000000 --work-ms 10 --quiet &
  other=$!
  job=()
  [ "$mode" = split ] && job=(--job 'split$OMPI_COMM_WORLD_RANK')
  start=$(date +%s.%N)
  mpirun "${root[@]}" -np 2 --bind-to none -x OMP_NUM_THREADS=2 sh -c \
    "exec /usr/bin/time -f 'cpu %U %S' -a -o $dir/cpu-$mode $build/libruntime/launcher/cosched-run --socket $dir/rm.sock --quiet ${job[*]} -- $build/bin/mpi-hybrid $iterations 65536 40 0" \
    >/dev/null
  end=$(date +%s.%N)
  kill "$other"; wait "$other" 2>/dev/null || true; other=
  kill "$rm_pid"; wait "$rm_pid" 2>/dev/null || true; rm_pid=
  cpu=$(awk '$1 == "cpu" { s += $2 + $3 } END { printf "%.2f", s }' "$dir/cpu-$mode")
  echo "$mode: $iterations iterations in $(echo "$end - $start" | bc) s wall; the ranks used $cpu CPU·s"
done
