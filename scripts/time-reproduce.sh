#!/usr/bin/env bash
# Times the main job, `twinbench reproduce`, as a user runs it: N runs (default 3) one after the
# other, each checked byte for byte against results/reproduction, and writes the wall and CPU times
# (min / median / max) with the machine they were measured on to
# results/reproduction/wall-time.txt; the README quotes that file's first line (between its
# reproduce-time markers, rewritten by scripts/docs-figures.sh) and docs/model.md (assembled by
# scripts/model-doc.sh) quotes it too, so the figure there always comes from this script.
# Run it on an otherwise idle machine: the figure is only as quiet as the machine.
# Usage: bash scripts/time-reproduce.sh [--bin build/default/twinbench] [--runs N]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/default/twinbench
runs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift ;;
    --runs) runs="$2"; shift ;;
    *) echo "usage: $0 [--bin PATH] [--runs N]" >&2; exit 2 ;;
  esac
  shift
done
[[ "$runs" =~ ^[1-9][0-9]?$ ]] || { echo "error: --runs takes 1..99, not '$runs'" >&2; exit 2; }
[ -x "$bin" ] || { echo "error: $bin is missing; build first (cmake --build --preset default)" >&2; exit 1; }
cache="$(dirname "$bin")/CMakeCache.txt"
preset="$(basename "$(dirname "$bin")")"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$cache" 2>/dev/null || true)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

walls=() cpus=()
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((i = 1; i <= runs; i++)); do
  TIMEFORMAT='%R %U %S'
  { time "$bin" reproduce --out "$work/run" -q > /dev/null 2> "$work/stderr"; } 2> "$work/time"
  read -r real user sys < "$work/time"
  for f in reproduction.csv reproduction.md; do
    cmp -s "$work/run/$f" "results/reproduction/$f" ||
      { echo "error: run $i: $f differs from results/reproduction/$f" >&2; exit 1; }
  done
  walls+=("$real")
  cpus+=("$(echo "$user + $sys" | bc)")
  echo "run $i/$runs: ${real} s wall, ${user} s user, ${sys} s sys (output identical)" >&2
done

# min / median / max of the arguments
summary() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
  m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
  printf "%.1f / %.1f / %.1f", v[1], m, v[NR] }'; }
out=results/reproduction/wall-time.txt
{
  echo "twinbench reproduce: $(summary "${walls[@]}") s wall (min / median / max of $runs runs), $(summary "${cpus[@]}") s CPU (user + sys), on $cpu, $(nproc) cores, preset $preset ($build_type)"
  echo
  echo "Measured $(date -u +%Y-%m-%d) by scripts/time-reproduce.sh: $(uname -sr), load average before the first run $load_before;"
  echo "each run's reproduction.csv and .md identical to results/reproduction. Per run (wall, CPU s):"
  for ((i = 0; i < runs; i++)); do echo "  run $((i + 1)): ${walls[$i]} ${cpus[$i]}"; done
} > "$out.partial"
mv "$out.partial" "$out"
# docs/model.md quotes it; the script that assembles it reads this file. Then the figures quoted
# between markers in README.md and docs/ (the reproduce-time one among them) from the results.
bash scripts/model-doc.sh --bin "$bin" > /dev/null
bash scripts/docs-figures.sh
cat "$out"
