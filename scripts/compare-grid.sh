#!/usr/bin/env bash
# Regenerates results/compare/: the model against real kernel TCP (`twinbench compare`,
# docs/emulated-path.md) over the grid of scenarios/compare/kernel_grid.textproto:
# RTT 10/40/100 ms x downlink 20/100 Mbit/s x server CUBIC/BBR (x ping, 20 KiB, 400 KiB, 1 MiB,
# 8 MiB x 60 fps and uncapped x the six published variants).
#
#   bash scripts/compare-grid.sh --runs 3            both twins. Needs root (CAP_NET_ADMIN) and
#       /dev/net/tun; runs in real time (about 40 minutes on 2 cores), so keep the machine otherwise
#       idle: a run whose emulator fell behind is marked invalid in compare.md. The kernel's side
#       is kept in results/compare/kernel/ (each point's emulated results.json and kernel.txt).
#   bash scripts/compare-grid.sh --rejudge --runs 3  the simulation only, judged against the kernel
#       run kept in results/compare/kernel/ (about a minute, no root): how a model change moves
#       the cells, free of the kernel's run-to-run movement. The --runs must be the kernel run's.
#
# Other arguments go to `twinbench compare` (e.g. --runs 5).
set -euo pipefail
cd "$(dirname "$0")/.."
twinbench=${TWINBENCH:-build/default/twinbench}
[ -x "$twinbench" ] || { echo "compare-grid: no $twinbench; build first or set TWINBENCH" >&2; exit 2; }
# RESULTS and KERNEL move the output and the recorded kernel run (scripts/check-results.sh
# rejudges into a directory of its own against the committed recording).
results=${RESULTS:-results/compare}
kernel=${KERNEL:-results/compare/kernel}
rejudge=0
args=()
for a in "$@"; do
  if [ "$a" = --rejudge ]; then rejudge=1; else args+=("$a"); fi
done
if ((rejudge)); then
  [ -d "$kernel/points" ] && [ -f "$kernel/kernel.txt" ] ||
    { echo "compare-grid: no recorded kernel run in $kernel (points/ and kernel.txt)" >&2; exit 2; }
  args+=(--emulated-from "$kernel")
fi
out=${OUT:-out/compare-grid}
rm -rf "$out"
start=$(date +%s)
"$twinbench" compare scenarios/compare/kernel_grid.textproto \
  --axis rtt=10ms,40ms,100ms --axis rate=20Mbit,100Mbit --axis cc=cubic,bbr --out "$out" \
  ${args[@]+"${args[@]}"} > /dev/null
end=$(date +%s)
mkdir -p "$results"
cp "$out"/compare.{csv,md,png,svg} "$results/"
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
machine="machine: $cpu, $(nproc) cores, kernel $(uname -r), build preset ${PRESET:-default}"
if ((rejudge)); then
  {
    echo "$((end - start)) s wall time for scripts/compare-grid.sh $*"
    echo "$machine"
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "emulated side: not run; the kernel run recorded in kernel/ ($(sed -n 's/^date: //p' "$kernel/kernel.txt"))"
  } > "$results/run.txt"
else
  # The kernel's side, kept so that later model changes can be judged against this same run.
  rm -rf "$kernel.partial"
  for point in "$out"/points/*/; do
    mkdir -p "$kernel.partial/points/$(basename "$point")/emulated"
    cp "$point/emulated/results.json" "$kernel.partial/points/$(basename "$point")/emulated/"
  done
  {
    echo "kernel run of scripts/compare-grid.sh $*: $((end - start)) s wall time (both twins)"
    echo "$machine"
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  } > "$kernel.partial/kernel.txt"
  rm -rf "$kernel"
  mv "$kernel.partial" "$kernel"
  cp "$kernel/kernel.txt" "$results/run.txt"
fi
echo "compare-grid: wrote $results/compare.{csv,md,png,svg} and run.txt" >&2
