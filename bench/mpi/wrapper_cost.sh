#!/usr/bin/env bash
# The PMPI wrappers' cost per message (docs/performance.md, "MPI"), side by side: mpi-msgrate (one rank
# sending small messages to itself: CPU time per message, no partner to wait for) run natively and with
# libcosched_mpi preloaded, alternately, ROUNDS times each. With no RM the wrappers count into their sink: the
# same work per message as under an RM (a PMPI_Type_size and relaxed atomic adds; MPI_Recv also a
# PMPI_Get_count). Then the 8-byte ping-pong between two ranks the same way (a real exchange, noisier).
#   bench/mpi/wrapper_cost.sh BUILD [ROUNDS] [MESSAGES]
set -euo pipefail
build=${1:?usage: wrapper_cost.sh BUILD [ROUNDS] [MESSAGES]}
rounds=${2:-7}
messages=${3:-2000000}
lib="$build/wrappers/libcosched_mpi.so.0"
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
wrap=(-x LD_PRELOAD="$lib" -x COSCHED_QUIET=1 -x COSCHED_SOCKET=/nonexistent/rm.sock)
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
report() {  # name, native values..., --, wrapped values...
  local name=$1; shift
  local native=() wrapped=() side=n
  for v in "$@"; do
    if [ "$v" = -- ]; then side=w; elif [ $side = n ]; then native+=("$v"); else wrapped+=("$v"); fi
  done
  local n w
  n=$(median "${native[@]}")
  w=$(median "${wrapped[@]}")
  echo "$name native : ${native[*]}  median $n"
  echo "$name wrapped: ${wrapped[*]}  median $w"
  awk -v n="$n" -v w="$w" -v name="$name" 'BEGIN { printf "%s ratio wrapped/native %.3f (%+.1f ns per message)\n", name, w / n, (w - n) * (name ~ /us/ ? 1000 : 1) }'
}
a=()
b=()
for ((i = 0; i < rounds; i++)); do
  a+=("$(mpirun "${root[@]}" -np 1 -x OMP_NUM_THREADS=1 "$build/bin/mpi-msgrate" "$messages" 8 | awk '{ print $NF }')")
  b+=("$(mpirun "${root[@]}" -np 1 -x OMP_NUM_THREADS=1 "${wrap[@]}" "$build/bin/mpi-msgrate" "$messages" 8 | awk '{ print $NF }')")
done
report "msgrate ns/message" "${a[@]}" -- "${b[@]}"
a=()
b=()
for ((i = 0; i < rounds; i++)); do
  a+=("$(mpirun "${root[@]}" -np 2 --bind-to core -x OMP_NUM_THREADS=1 "$build/bin/mpi-pingpong" 8 1 1 | awk '$3 == 0 { print $NF }')")
  b+=("$(mpirun "${root[@]}" -np 2 --bind-to core -x OMP_NUM_THREADS=1 "${wrap[@]}" "$build/bin/mpi-pingpong" 8 1 1 | awk '$3 == 0 { print $NF }')")
done
report "pingpong us/message" "${a[@]}" -- "${b[@]}"
