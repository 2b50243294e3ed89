#!/usr/bin/env bash
# Regenerates results/load/simulated/: the simulated load of scenarios/load/clients_60fps.textproto
# swept over the number of clients (its `sweep` axis, 1 to 256), and the plot of median and p99
# frames against clients (docs/load.md, "Simulated load"). Extra arguments go to
# `twinbench sweep` (e.g. --jobs 2). Point results are kept in out/load-sim/, so an interrupted
# run resumes; remove that directory to recompute every point.
set -euo pipefail
cd "$(dirname "$0")/.."
twinbench=${TWINBENCH:-build/default/twinbench}
[ -x "$twinbench" ] || { echo "load-sim: no $twinbench; build first or set TWINBENCH" >&2; exit 2; }
results=results/load/simulated
mkdir -p "$results"
"$twinbench" sweep scenarios/load/clients_60fps.textproto --out out/load-sim "$@"
cp out/load-sim/sweep.csv "$results/sweep.csv"
cp out/load-sim/sweep.jsonl "$results/sweep.jsonl"
scripts/plot-sweep.sh clients "$results/sweep.csv" "$results/frames-vs-clients"
