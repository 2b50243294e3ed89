#!/usr/bin/env bash
# The model against real kernel TCP on paths nobody chose: N points drawn at random from SEED,
# each run by `twinbench compare` (simulation and emulated path, docs/emulated-path.md), into
# results/compare-random/seed-SEED/ (compare.csv of every cell, points.csv of the draws, summary.md).
#
#   bash scripts/compare-random.sh SEED N [--runs R]      (root, /dev/net/tun; real time)
#
# Each point draws: the round trip log-uniform in 5-300 ms; the downlink log-uniform in
# 2-200 Mbit/s, the uplink a fifth of it (at least 1 Mbit/s); the server's congestion control
# CUBIC or BBR; the bottleneck queue 0.25-4 BDP (at least 4 packets); random loss 0 (half the
# points) or up to 1 % each way; the frame cap 0, 30, 60 or 120; one body size log-uniform in
# 16 KiB-16 MiB; the six published variants. A size whose wire time at the drawn rate exceeds 4 s
# is drawn again (the emulated path runs in real time: 16 MiB at 2 Mbit/s is a minute a request),
# which the summary states. The draws come from SHA-256 of "SEED:point:field", so a seed gives
# the same points on any machine. Keep the machine otherwise idle: a run whose emulator or client
# fell behind is marked invalid, and the summary counts valid runs apart.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 SEED N [--runs R]" >&2; exit 2; }
seed=$1 n=$2
shift 2
runs=3
[ "${1:-}" = "--runs" ] && runs=$2
twinbench=${TWINBENCH:-build/default/twinbench}
[ -x "$twinbench" ] || { echo "compare-random: no $twinbench; build first" >&2; exit 2; }
out=out/compare-random/seed-$seed
results=results/compare-random/seed-$seed
rm -rf "$out"
mkdir -p "$out"

# uniform SEED POINT FIELD: a number in [0, 1) from SHA-256 of the three.
uniform() {
  local h
  h=$(printf '%s:%s:%s' "$1" "$2" "$3" | sha256sum | cut -c1-12)
  awk -v h=$((16#$h)) 'BEGIN { printf "%.9f", h / 281474976710656 }'
}
# log_uniform U LO HI
log_uniform() { awk -v u="$1" -v lo="$2" -v hi="$3" 'BEGIN { printf "%.6f", exp(log(lo) + u * (log(hi) - log(lo))) }'; }

echo "point,rtt_ms,down_mbps,up_mbps,cc,queue_packets,loss,fps,body_bytes" > "$out/points.csv"
redrawn=0
start=$(date +%s)
for ((i = 0; i < n; i++)); do
  rtt=$(log_uniform "$(uniform "$seed" "$i" rtt)" 5 300)
  down=$(log_uniform "$(uniform "$seed" "$i" rate)" 2 200)
  up=$(awk -v d="$down" 'BEGIN { u = d / 5; printf "%.6f", u < 1 ? 1 : u }')
  cc=$(awk -v u="$(uniform "$seed" "$i" cc)" 'BEGIN { print u < 0.5 ? "CUBIC" : "BBR" }')
  bdp_packets=$(awk -v r="$rtt" -v d="$down" 'BEGIN { print d * 1e6 / 8 * r / 1000 / 1500 }')
  queue=$(awk -v u="$(uniform "$seed" "$i" queue)" -v b="$bdp_packets" \
    'BEGIN { q = int(b * exp(log(0.25) + u * (log(4) - log(0.25))) + 0.5); print q < 4 ? 4 : q }')
  loss=$(awk -v a="$(uniform "$seed" "$i" lossy)" -v u="$(uniform "$seed" "$i" loss)" \
    'BEGIN { printf "%.5f", a < 0.5 ? 0 : u * 0.01 }')
  fps=$(awk -v u="$(uniform "$seed" "$i" fps)" 'BEGIN { split("0 30 60 120", f, " "); print f[int(u * 4) + 1] }')
  for ((k = 0; ; k++)); do
    bytes=$(awk -v u="$(uniform "$seed" "$i" "size$k")" \
      'BEGIN { printf "%d", exp(log(16384) + u * (log(16777216) - log(16384))) }')
    awk -v b="$bytes" -v d="$down" 'BEGIN { exit !(b * 8 / (d * 1e6) <= 4) }' && break
    redrawn=$((redrawn + 1))
  done
  echo "$i,$rtt,$down,$up,$cc,$queue,$loss,$fps,$bytes" >> "$out/points.csv"
  half=$(awk -v r="$rtt" 'BEGIN { printf "%.6f", r / 2 }')
  cat > "$out/point-$i.textproto" <<EOF
# compare-random seed $seed, point $i
name: "random_$i"
engine: GODOT4
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
    client_to_server_delay_ms: $half
    server_to_client_delay_ms: $half
    downlink_mbps: $down
    uplink_mbps: $up
    queue_packets: $queue
    loss_rate: $loss
  }
  client_tcp { congestion_control: CUBIC }
  server_tcp { congestion_control: $cc }
}
EOF
  echo "compare-random: point $((i + 1))/$n: rtt $rtt ms, $down/$up Mbit/s, $cc, queue $queue, loss $loss, $fps fps, $bytes B" >&2
  "$twinbench" compare "$out/point-$i.textproto" --seed "$seed" --out "$out/point-$i" -q > /dev/null 2> "$out/point-$i.log" ||
    { cat "$out/point-$i.log" >&2; exit 1; }
done
end=$(date +%s)

# Every cell, its point first (the per-point files have an empty point column).
{
  echo "point,$(head -1 "$out/point-0/compare.csv" | cut -d, -f2-)"
  for ((i = 0; i < n; i++)); do tail -n +2 "$out/point-$i/compare.csv" | sed "s/^[^,]*,/$i,/"; done
} > "$out/compare.csv"
mkdir -p "$results"
cp "$out/compare.csv" "$out/points.csv" "$results/"
# within_frames is column 15, within_time 16, emu_path_valid 17.
summary=$(awk -F, 'NR > 1 {
    cells++; if ($16 == "yes") t++; if ($15 != "") { capped++; if ($15 == "yes") f++ }
    if ($17 == "yes") { vc++; if ($16 == "yes") vt++ } }
  END { printf "%d of %d cells (%.0f %%) within max(1 frame, 5 %%) in time; %d of %d capped cells (%.0f %%) within one frame in frame counts; on valid runs %d of %d (%.0f %%) in time",
        t, cells, cells ? 100 * t / cells : 0, f, capped, capped ? 100 * f / capped : 0, vt, vc, vc ? 100 * vt / vc : 0 }' "$out/compare.csv")
{
  echo "# The model on random paths: seed $seed, $n points"
  echo
  echo "**$summary**"
  echo
  echo "Generated by \`bash scripts/compare-random.sh $seed $n --runs $runs\` at commit $(git rev-parse --short HEAD),"
  echo "$(date -u +%Y-%m-%d), in $((end - start)) s on $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores,"
  echo "kernel $(uname -r), preset default; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Sizes drawn again because their wire time exceeded 4 s: $redrawn. The points are in"
  echo "points.csv, every cell in compare.csv (the columns of \`twinbench compare\`, the point first)."
  echo
  echo "| Point | RTT ms | Mbit/s | CC | queue | loss | fps | bytes | within in time | valid |"
  echo "|---:|---:|---:|---|---:|---:|---:|---:|---:|:---:|"
  tail -n +2 "$out/points.csv" | while IFS=, read -r p rtt down up cc queue loss fps bytes; do
    within=$(awk -F, -v p="$p" 'NR > 1 && $1 == p { c++; if ($16 == "yes") w++ } END { printf "%d/%d", w, c }' "$out/compare.csv")
    valid=$(awk -F, -v p="$p" 'NR > 1 && $1 == p && $17 != "yes" { bad = 1 } END { print bad ? "no" : "yes" }' "$out/compare.csv")
    printf '| %s | %.1f | %.1f | %s | %s | %s | %s | %s | %s | %s |\n' "$p" "$rtt" "$down" "$cc" "$queue" "$loss" "$fps" "$bytes" "$within" "$valid"
  done
} > "$results/summary.md"
echo "compare-random: $summary" >&2
echo "compare-random: wrote $results/{summary.md,compare.csv,points.csv}" >&2
