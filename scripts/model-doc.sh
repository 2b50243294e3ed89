#!/usr/bin/env bash
# Assembles docs/model.md from docs/model.src.md (written by hand), the profile's current values
# (scenarios/profiles/lightsail-2026.textproto) and the generated results:
#   results/calibration/calibration.md   (twinbench calibrate's report)
#   results/reproduction/reproduction.md (twinbench reproduce's report)
#   results/reproduction/wall-time.txt   (written by scripts/time-reproduce.sh)
# Usage: bash scripts/model-doc.sh [--run] [--bin build/default/twinbench]
#   --run: first re-run `twinbench reproduce --out results/reproduction`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/default/twinbench
run=0
while [ $# -gt 0 ]; do
  case "$1" in
    --run) run=1 ;;
    --bin) bin="$2"; shift ;;
    *) echo "usage: $0 [--run] [--bin PATH]" >&2; exit 2 ;;
  esac
  shift
done
profile=scenarios/profiles/lightsail-2026.textproto
repro=results/reproduction/reproduction.md
calib=results/calibration/calibration.md
if [ "$run" = 1 ]; then
  "$bin" reproduce --out results/reproduction -q > /dev/null
fi
for f in "$repro" "$calib"; do
  [ -f "$f" ] || { echo "error: $f is missing; run twinbench reproduce / calibrate first" >&2; exit 1; }
done
field() { grep -m1 -E "^\s*(\w+ \{ )?.*\b$1:" "$profile" | sed -E "s/.*\b$1: *([^ #}]+).*/\1/"; }
delay=$(field client_to_server_delay_ms)
rtt=$(echo "$delay * 2" | bc)
version=$(field max_version)
delack=$(grep -m1 -oE 'delayed_ack_ms: *[0-9.]+' "$profile" | grep -oE '[0-9.]+$' || echo 40)
out=docs/model.md.partial
sed -e "s/@tls_max_version@/$version/" \
    -e "s/@handshake_cpu_ms@/$(field handshake_cpu_ms)/" \
    -e "s/@http_request_worker_sleep_ms@/$(field http_request_worker_sleep_ms)/" \
    -e "s/@rtt_ms@/$rtt/" \
    -e "s/@downlink_mbps@/$(field downlink_mbps)/" \
    -e "s/@server_delayed_ack_ms@/$delack/" \
    -e "s/@server_think_ms@/$(field server_think_ms)/" \
    docs/model.src.md > "$out"
{
  echo "From \`$repro\` (\`twinbench reproduce --out results/reproduction\`):"
  echo
  # The summary lines: the frame and 5 % criteria, then the interquartile one.
  grep -m2 '^\*\*' "$repro" | sed G
  # The same 60 cells split by the calibration's fit set (patterns scenario[/fps[/bytes]]).
  fit=$(grep -m1 -oE 'Fitted on `[^`]+`' "$calib" | sed -E 's/Fitted on `(.*)`/\1/')
  awk -F, -v fit="$fit" '
    function abs(x) { return x < 0 ? -x : x }
    function in_fit(sc, fps, bytes,   n, pats, i, p, k) {
      n = split(fit, pats, ",")
      for (i = 1; i <= n; i++) {
        k = split(pats[i], p, "/")
        if (p[1] == sc && (k < 2 || p[2] == fps) && (k < 3 || p[3] == bytes)) return 1
      }
      return 0
    }
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j > 0 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    /^#/ || $1 == "scenario" { next }
    {
      e = abs($7 - $6) / $6 * 100; frame = $2 > 0 ? 1000 / $2 : 1
      g = in_fit($1, $2, $3) ? "fit" : "out"
      err[g, ++n[g]] = e; if (abs($7 - $6) <= frame + 1e-6) within[g]++; if (e > max[g]) max[g] = e
    }
    END {
      for (g in n) { for (i = 1; i <= n[g]; i++) v[i] = err[g, i]; med[g] = median(v, n[g]) }
      printf "Cells in the calibration fit set (`%s`): %d, %d within one frame, median |error| %.1f %%, max %.1f %%. ", fit, n["fit"], within["fit"], med["fit"], max["fit"]
      printf "All other cells (held out from the fit; the downlink rate and worker sleep come from file-download slopes, see the parameter table): %d, %d within one frame, median |error| %.1f %%, max %.1f %%.\n", n["out"], within["out"], med["out"], max["out"]
    }' results/reproduction/reproduction.csv
  echo
  if [ -f results/reproduction/wall-time.txt ]; then
    echo "Reproduce time: $(head -1 results/reproduction/wall-time.txt) (scripts/time-reproduce.sh; details in results/reproduction/wall-time.txt)."
    echo
  fi
  echo "Calibration, from \`$calib\`:"
  echo
  # The calibration report up to its per-cell tables: the command, parameters and both summaries.
  sed -n '3,/^\*\*Held-out/p' "$calib"
  echo
  echo "Per cell (published, simulated, errors; ✗ = outside max(1 frame, 5 %); in IQR = the simulated median within the published q1..q3):"
  # The per-table sections of the reproduction report, without the five-number summaries.
  sed -n '/^## latency/,/^## Five-number/p' "$repro" | sed '$d' | sed 's/^## /### /'
  echo "The five-number summaries side by side are in [\`$repro\`](../$repro)."
} >> "$out"
mv "$out" docs/model.md
echo "wrote docs/model.md"
