#!/usr/bin/env bash
# The PMPI wrappers' cost per message (docs/performance.md, "MPI"): the 8-byte ping-pong (window 1) run
# natively and with libcosched_mpi preloaded, alternately, ROUNDS times each, side by side. With no RM the
# wrappers count into their sink, the same work per message as under an RM (two relaxed adds and a
# PMPI_Type_size); `--rm` runs the wrapped side under a real cosched-rm (equip) as well.
#   bench/mpi/wrapper_cost.sh BUILD [ROUNDS] [SECONDS]
set -euo pipefail
build=${1:?usage: wrapper_cost.sh BUILD [ROUNDS] [SECONDS]}
rounds=${2:-5}
seconds=${3:-2}
lib="$build/wrappers/libcosched_mpi.so.0"
prog="$build/bin/mpi-pingpong"
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
run() {  # prints us_per_message of rank 0
  mpirun "${root[@]}" -np 2 --bind-to core "$@" "$prog" 8 "$seconds" 1 | awk '$3 == 0 { print $NF }'
}
native=()
wrapped=()
for ((i = 0; i < rounds; i++)); do
  native+=("$(run -x OMP_NUM_THREADS=1)")
  wrapped+=("$(run -x OMP_NUM_THREADS=1 -x LD_PRELOAD="$lib" -x COSCHED_QUIET=1 -x COSCHED_SOCKET=/nonexistent/rm.sock)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
n=$(median "${native[@]}")
w=$(median "${wrapped[@]}")
echo "native  us/message: ${native[*]}  median $n"
echo "wrapped us/message: ${wrapped[*]}  median $w"
awk -v n="$n" -v w="$w" 'BEGIN { printf "ratio wrapped/native %.3f, %.3f us per message\n", w / n, w - n }'
