#!/usr/bin/env bash
# Regenerates results/compare/: the model against real kernel TCP (`twinbench compare`,
# docs/live-path.md) over the grid of scenarios/compare/kernel_grid.textproto:
# RTT 10/40/100 ms x downlink 20/100 Mbit/s x server CUBIC/BBR (x ping, 20 KiB, 400 KiB, 1 MiB,
# 8 MiB x 60 fps and uncapped x the six published variants). Needs root (CAP_NET_ADMIN) and
# /dev/net/tun; runs in real time (about 40 minutes on 2 cores), so keep the machine otherwise idle:
# a run whose emulator fell behind is marked invalid in compare.md. Extra arguments go to
# `twinbench compare` (e.g. --runs 5).
set -euo pipefail
cd "$(dirname "$0")/.."
twinbench=${TWINBENCH:-build/default/twinbench}
[ -x "$twinbench" ] || { echo "compare-grid: no $twinbench; build first or set TWINBENCH" >&2; exit 2; }
results=results/compare
out=out/compare-grid
rm -rf "$out"
start=$(date +%s)
"$twinbench" compare scenarios/compare/kernel_grid.textproto \
  --axis rtt=10ms,40ms,100ms --axis rate=20Mbit,100Mbit --axis cc=cubic,bbr --out "$out" "$@" > /dev/null
end=$(date +%s)
mkdir -p "$results"
cp "$out"/compare.{csv,md,png,svg} "$results/"
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
{
  echo "$((end - start)) s wall time for scripts/compare-grid.sh $*"
  echo "machine: $cpu, $(nproc) cores, kernel $(uname -r), build preset ${PRESET:-default}"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
} > "$results/run.txt"
echo "compare-grid: wrote $results/compare.{csv,md,png,svg} and run.txt" >&2
