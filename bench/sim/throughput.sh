#!/usr/bin/env bash
# Simulator throughput: generates 10,000- and 100,000-job SWF traces for 1,024 CPUs (PDPA's four application
# models, a quarter of the jobs each; Poisson arrivals at offered load 0.8) and replays each with PDPA under
# /usr/bin/time -v. Each run is --dry-run (the engine and the summary; no result files: the trace writers are
# measured separately in docs/performance.md). Every size runs without placement (--no-placement); sizes up
# to RM_PLACEMENT_MAX_JOBS (default 10000) also run with the daemon's rm::place(), whose cost per decision
# grows with the machine (docs/performance.md explains why and what a fix gives).
#
# Usage: throughput.sh COSCHED_SIM COSCHED_SWFGEN MODELS.yaml WORKDIR [JOBS...]   (default JOBS: 10000 100000)
set -euo pipefail
sim="$1" swfgen="$2" models="$3" work="$4"
shift 4
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(10000 100000)
mkdir -p "$work"

printf '%-8s %-11s %10s %12s %12s %10s\n' jobs placement "wall (s)" "engine (s)" "jobs/s" "peak (MB)"
for n in "${sizes[@]}"; do
  trace="$work/bench-$n.swf"
  [[ -f "$trace" ]] || "$swfgen" --jobs "$n" --max-procs 1024 --load 0.8 --seed 1 \
      --apps 1:0.25,2:0.25,3:0.25,4:0.25 -o "$trace"
  for placement in rm none; do
    [[ "$placement" == rm && "$n" -gt "${RM_PLACEMENT_MAX_JOBS:-10000}" ]] && continue
    extra=()
    [[ "$placement" == none ]] && extra=(--no-placement)
    log="$work/bench-$n-$placement.log"
    /usr/bin/time -v "$sim" "$trace" --policy pdpa --cpus 1024 --models "$models" --dry-run "${extra[@]}" \
        > "$log.out" 2> "$log"
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$log")
    peak=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$log")
    engine=$(sed -n 's/.*| \([0-9.]*\) s wall.*/\1/p' "$log.out")
    printf '%-8s %-11s %10s %12s %12.0f %10s\n' "$n" "$placement" "$wall" "$engine" "$(awk "BEGIN { print $n / $wall }")" "$peak"
  done
done
