#!/usr/bin/env bash
# Regenerates results/sweep-example/: runs the example sweeps of scenarios/sweeps/ in simulation
# and plots them (docs/sweeps.md). Extra arguments go to `twinbench sweep` (e.g. --jobs 4).
# Point results are kept in out/sweep-example/, so an interrupted run resumes; remove that
# directory to recompute every point (e.g. after changing the models).
set -euo pipefail
cd "$(dirname "$0")/.."
twinbench=${TWINBENCH:-build/default/twinbench}
[ -x "$twinbench" ] || { echo "example-sweep: no $twinbench; build first or set TWINBENCH" >&2; exit 2; }
results=results/sweep-example
mkdir -p "$results"
for sweep in rtt_rate_fps body_chunk_fps; do
  "$twinbench" sweep "scenarios/sweeps/$sweep.textproto" --out "out/sweep-example/$sweep" "$@"
  cp "out/sweep-example/$sweep/sweep.csv" "$results/$sweep.csv"
  cp "out/sweep-example/$sweep/sweep.jsonl" "$results/$sweep.jsonl"
done
scripts/plot-sweep.sh speedup "$results/rtt_rate_fps.csv" "$results/speedup-c3_coop-vs-nat_coop" c3_coop nat_coop 1048576
scripts/plot-sweep.sh latency "$results/rtt_rate_fps.csv" "$results/latency-vs-rtt" 100
scripts/plot-sweep.sh size "$results/body_chunk_fps.csv" "$results/download-vs-size"
