#!/usr/bin/env bash
# The model against real kernel TCP on links that change over time: for each trace of data/traces/
# (scripts/make-traces.sh), the six published variants at a few sizes and frame caps, run by
# `twinbench compare` (simulation and emulated path, both on the same link model) into
# results/compare-traces/ (compare.csv of every cell, summary.md). docs/scenarios.md, "Links that
# change over time".
#
#   bash scripts/compare-traces.sh [--runs R]      (root, /dev/net/tun; real time: keep it quiet)
#   bash scripts/compare-traces.sh --report-only    (the summary and plots again, from out/)
#
# Time 0 of a trace is the run's start, and the twins' requests drift apart in time as a run goes
# on (each request takes a little more or less on one twin), so each cell runs on its own: one
# scenario per frame cap and size, and in it one run per variant (`--axis variant=...`), its warmup
# and rounds the only requests, each meeting the trace where the other twin's does, to within that
# cell's own drift (the summary lists it for the cells outside).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3 report_only=0
[ "${1:-}" = "--runs" ] && runs=$2
[ "${1:-}" = "--report-only" ] && report_only=1
twinbench=${TWINBENCH:-build/default/twinbench}
[ -x "$twinbench" ] || { echo "compare-traces: no $twinbench; build first" >&2; exit 2; }
out=out/compare-traces
results=results/compare-traces
traces=(steps-20-5-50mbit walk-2-40mbit-outages fade-30-2mbit)
sizes=(0 262144 1048576)
caps=(0 60)
variants=c3_coop,c3_thr,c3s_coop,c3s_thr,nat_coop,nat_thr
((report_only)) || { rm -rf "$out"; mkdir -p "$out"; }
start=$(date +%s)
cells=()
for trace in "${traces[@]}"; do
  for fps in "${caps[@]}"; do
    for bytes in "${sizes[@]}"; do
      name=${trace}_${fps}fps_${bytes}
      cells+=("$name")
      ((report_only)) && continue
      cat > "$out/$name.textproto" <<EOT
# compare-traces: $trace, $fps fps, $bytes B
name: "$name"
variants { name: "c3_coop"  client: C3HTTP       threaded: false session: false }
variants { name: "c3_thr"   client: C3HTTP       threaded: true  session: false }
variants { name: "c3s_coop" client: C3HTTP       threaded: false session: true }
variants { name: "c3s_thr"  client: C3HTTP       threaded: true  session: true }
variants { name: "nat_coop" client: HTTP_REQUEST threaded: false }
variants { name: "nat_thr"  client: HTTP_REQUEST threaded: true }
frame_caps: [$fps]
body_bytes: [$bytes]
runs: $runs
warmups: 1
frame_loop { frame_work_ms: 1.0 }
network {
  link {
    client_to_server_delay_ms: 20
    server_to_client_delay_ms: 20
    downlink_trace { file: "$PWD/data/traces/$trace.trace" }
    uplink_mbps: 10
  }
  server_tcp { nodelay: true }
}
EOT
      # A run whose emulator or client fell behind (a busy machine) is run again, as the
      # real-time tests do: up to three attempts, the last kept either way.
      for attempt in 1 2 3; do
        echo "compare-traces: $name (attempt $attempt)" >&2
        "$twinbench" compare "$out/$name.textproto" --axis "variant=$variants" --out "$out/$name" -q \
          > /dev/null 2> "$out/$name.log" ||
          { cat "$out/$name.log" >&2; exit 1; }
        # emu_path_valid is column 17 of compare.csv.
        awk -F, 'NR > 1 && $17 != "yes" { bad = 1 } END { exit bad }' "$out/$name/compare.csv" && break
      done
      echo "$attempt" > "$out/$name.attempts"
    done
  done
done
end=$(date +%s)
# What the report says of the run, kept with it for --report-only.
((report_only)) || cat > "$out/run.info" <<EOT
commit=$(git rev-parse --short HEAD)
date=$(date -u +%Y-%m-%d)
seconds=$((end - start))
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
load=$(cut -d' ' -f1-3 /proc/loadavg)
EOT
info() { sed -n "s/^$1=//p" "$out/run.info"; }
{
  echo "trace,$(head -1 "$out/${cells[0]}/compare.csv" | cut -d, -f2-)"
  for name in "${cells[@]}"; do
    tail -n +2 "$out/$name/compare.csv" | sed "s/^[^,]*,/${name%%_*},/"
  done
} > "$out/compare.csv"
mkdir -p "$results"
cp "$out/compare.csv" "$results/"
# A picture per trace: its rate over the run above each variant's requests, both twins
# (the 60 fps, 1 MiB cell's run).
for trace in "${traces[@]}"; do
  pairs=()
  for v in ${variants//,/ }; do
    run=$out/${trace}_60fps_1048576/points/variant=$v
    pairs+=(--pair "$run/sim/results.json" "$run/emulated/results.json")
  done
  python3 scripts/plot-trace-timeline.py "data/traces/$trace.trace" "$results/$trace" "${pairs[@]}" \
    --title "$trace: 1 MiB downloads at 60 fps, each variant's run from the trace's start"
done
# within_frames is column 15, within_time 16, emu_path_valid 17.
summary=$(awk -F, 'NR > 1 { cells++; if ($16 == "yes") t++; if ($17 == "yes") valid++ }
  END { printf "%d of %d cells (%.0f %%) within max(1 frame, 5 %%) in time; the emulator'"'"'s timing valid in %d of %d",
        t, cells, cells ? 100 * t / cells : 0, valid, cells }' "$out/compare.csv")
{
  echo "# The model against the kernel on links that change over time"
  echo
  echo "**$summary**"
  echo
  echo "Generated by \`bash scripts/compare-traces.sh --runs $runs\` at commit $(info commit),"
  echo "$(info date), in $(info seconds) s on $(info cpu), $(nproc) cores,"
  echo "kernel $(uname -r), preset default; load average at the end $(info load)."
  echo "Each trace of data/traces/ on the downlink (20 ms each way, uplink 10 Mbit/s, server nodelay),"
  echo "each (frame cap, size, variant) a run of its own from the trace's start; every cell in"
  echo "compare.csv (the columns of \`twinbench compare\`, the trace first)."
  echo
  echo "Each trace's rate over a run, above every request of the six variants' runs in both twins (the"
  echo "60 fps, 1 MiB cell): $(for t in "${traces[@]}"; do printf '[%s](%s.svg) ' "$t" "$t"; done)"
  echo
  echo "| Trace | fps | bytes | within in time | valid | attempts |"
  echo "|---|---:|---:|---:|:---:|---:|"
  for name in "${cells[@]}"; do
    trace=${name%%_*} rest=${name#*_} fps=${rest%%fps_*} bytes=${rest#*fps_}
    within=$(awk -F, 'NR > 1 { c++; if ($16 == "yes") w++ } END { printf "%d/%d", w, c }' "$out/$name/compare.csv")
    valid=$(awk -F, 'NR > 1 && $17 != "yes" { bad = 1 } END { print bad ? "no" : "yes" }' "$out/$name/compare.csv")
    attempts=$(cat "$out/$name.attempts" 2>/dev/null || echo 1)
    echo "| $trace | $fps | $bytes | $within | $valid | $attempts |"
  done
  echo
  echo "## The cells outside"
  echo
  echo "A trace's time runs from the run's start, and each twin's requests take a little more or less"
  echo "time than the other's, so later requests of a run meet the trace at other moments on the two"
  echo "twins. For each cell outside the bound, how much later the kernel's requests started than the"
  echo "simulation's (per measured round, from the samples' started_ms): offsets of hundreds of ms on"
  echo "a trace that changes within that time put the two requests on different rates."
  echo
  echo "| Trace | fps | bytes | variant | simulated ms | kernel ms | diff % | kernel start - simulated start, ms |"
  echo "|---|---:|---:|---|---:|---:|---:|---|"
  python3 - "$out" <<'PY'
import csv, json, sys
out = sys.argv[1]
for r in csv.DictReader(open(f"{out}/compare.csv")):
    if r["within_time"] == "yes":
        continue
    runs = f"{out}/{r['trace']}_{r['fps']}fps_{r['body_bytes']}/points/variant={r['variant']}"
    def starts(twin):
        return {s["round"]: s.get("started_ms", 0) for s in json.load(open(f"{runs}/{twin}/results.json"))["samples"]
                if s["variant"] == r["variant"] and not s.get("warmup")}
    sim, kernel = starts("sim"), starts("emulated")
    offsets = ", ".join(f"{kernel[k] - sim[k]:+.0f}" for k in sorted(sim) if k in kernel)
    print(f"| {r['trace']} | {r['fps']} | {r['body_bytes']} | {r['variant']} | {float(r['sim_median_ms']):.1f} | "
          f"{float(r['emu_median_ms']):.1f} | {float(r['diff_pct']):+.1f} | {offsets} |")
PY
} > "$results/summary.md"
echo "compare-traces: $summary" >&2
echo "compare-traces: wrote $results/{summary.md,compare.csv}" >&2
