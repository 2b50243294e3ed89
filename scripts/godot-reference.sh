#!/usr/bin/env bash
# Regenerates results/real-clients/godot3/: the real Godot 3.2 engine (Debian's godot3-server,
# headless) running clients/godot3/benchmark.gd inside `twinbench shell` behind each link of
# scenarios/real-clients/godot3-*.textproto, and `twinbench validate` putting the GODOT3 model
# (simulated) beside every cell (docs/real-clients.md).
#
#   sudo bash scripts/godot-reference.sh              the whole grid (10 min 41 s on AMD EPYC,
#       2 cores, preset default: run.txt records each run's machine)
#   sudo bash scripts/godot-reference.sh --smoke      one link, ping at 60 fps, 5 rounds (CI)
#   bash scripts/godot-reference.sh --revalidate      the model only, against the engine's run
#       kept in results/real-clients/godot3/ (seconds, no root): how a model change moves the
#       cells, free of the engine's run-to-run movement (scripts/check-results.sh runs it)
#
# Needs root (the emulated path) and godot3-server (scripts/setup.sh installs it). Runs in real
# time: keep the machine otherwise idle; each link's timing report is kept beside its results.
# OUT (default results/real-clients/godot3) moves the output.
set -euo pipefail
cd "$(dirname "$0")/.."
twinbench=$(realpath "${TWINBENCH:-build/default/twinbench}")
[ -x "$twinbench" ] || { echo "godot-reference: no $twinbench; build first or set TWINBENCH" >&2; exit 2; }
smoke=0 revalidate=0
case "${1:-}" in
  "") ;;
  --smoke) smoke=1 ;;
  --revalidate) revalidate=1 ;;
  *) echo "usage: $0 [--smoke|--revalidate]" >&2; exit 2 ;;
esac
((revalidate)) || command -v godot3-server > /dev/null ||
  { echo "godot-reference: no godot3-server; run scripts/setup.sh (Debian package godot3-server)" >&2; exit 2; }
committed=results/real-clients/godot3
out=${OUT:-$committed}
work=out/godot-reference
rm -rf "$work"
mkdir -p "$work"

# The published protocol's cells (scenarios/published/), with fewer rounds for the downloads:
# scenario, caps, sizes, runs, warmups.
if ((smoke)); then
  links=(40ms-20mbit-cubic)
  grid=("latency 60 0 5 1")
else
  links=(loopback 40ms-20mbit-cubic 40ms-20mbit-bbr 100ms-100mbit-cubic 100ms-100mbit-bbr)
  grid=("latency 0,120,60,30 0 15 2"
        "small_download 60 10240,20480,409600 15 2"
        "file_download 60 1048576,8388608 5 1")
fi

if ((revalidate)); then
  [ -f "$committed/run.txt" ] || { echo "godot-reference: no engine run kept in $committed" >&2; exit 2; }
  cp "$committed/run.txt" "$work/run.txt"
else
  {
    echo "engine run of scripts/godot-reference.sh $*: $(dpkg-query -W -f='godot3-server ${Version}' godot3-server 2> /dev/null)"
    echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, kernel $(uname -r), preset ${PRESET:-default}"
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ), twinbench $(git rev-parse --short HEAD 2> /dev/null || echo '?')"
  } > "$work/run.txt"
fi

for link in "${links[@]}"; do
  profile=scenarios/real-clients/godot3-$link.textproto
  dir=$work/$link
  mkdir -p "$dir"
  if ((revalidate)); then
    cp "$committed/$link/measured.csv" "$committed/$link"/*-link.json "$dir/"
    "$twinbench" validate "$dir/measured.csv" --profile "$profile" --out "$dir/validate" -q > /dev/null
    continue
  fi
  : > "$dir/measured.csv"
  for cells in "${grid[@]}"; do
    read -r scenario caps sizes runs warmups <<< "$cells"
    echo "godot-reference: $link: $scenario at $caps fps, $sizes B, $runs rounds ($(date -u +%H:%M:%S))" >&2
    "$twinbench" shell "$profile" --report "$dir/$scenario-link.json" -- \
      godot3-server --path "$PWD/clients/godot3" -s benchmark.gd -- \
      out="$PWD/$dir/$scenario.csv" scenario="$scenario" caps="$caps" sizes="$sizes" \
      runs="$runs" warmups="$warmups" > "$dir/$scenario-godot.log" 2>&1 ||
      { tail -20 "$dir/$scenario-godot.log" >&2; echo "godot-reference: $link $scenario failed" >&2; exit 1; }
    grep -o 'twinbench shell: .*' "$dir/$scenario-godot.log" >&2
    if [ -s "$dir/measured.csv" ]; then tail -n +2 "$dir/$scenario.csv"; else cat "$dir/$scenario.csv"; fi \
      >> "$dir/measured.csv"
  done
  "$twinbench" validate "$dir/measured.csv" --profile "$profile" --out "$dir/validate" -q > /dev/null
done

# Every cell of every link, the model beside the engine, in frames and in time.
summary=$work/summary.csv
echo "link,scenario,fps,body_bytes,variant,engine_median_ms,model_median_ms,diff_ms,frame_ms,diff_frames,within_one_frame,within_time,link_valid" > "$summary"
for link in "${links[@]}"; do
  dir=$work/$link
  valid=yes  # (JSON leaves a false "valid" out)
  for report in "$dir"/*-link.json; do grep -q '"valid": true' "$report" || valid=no; done
  # An uncapped frame lasts the profile's frame_work_ms (the engine's low-processor-mode sleep).
  uncapped=$(sed -n 's/.*frame_work_ms: *\([0-9.]*\).*/\1/p' "scenarios/real-clients/godot3-$link.textproto" | head -1)
  awk -F, -v link="$link" -v valid="$valid" -v uncapped="${uncapped:?no frame_work_ms in the profile}" 'NR > 1 {
      frame = $2 > 0 ? 1000 / $2 : uncapped
      diff = $7 - $6
      adiff = diff < 0 ? -diff : diff
      tol = frame > 0.05 * $6 ? frame : 0.05 * $6
      printf "%s,%s,%s,%s,%s,%.3f,%.3f,%+.3f,%.3f,%+.2f,%s,%s,%s\n", link, $1, $2, $3, $4, $6, $7, diff, frame,
        diff / frame, adiff <= frame + 1e-9 ? "yes" : "no", adiff <= tol + 1e-9 ? "yes" : "no", valid
    }' "$dir/validate/reproduction.csv" >> "$summary"
done
awk -F, 'NR > 1 {
    n++; t += $12 == "yes"; invalid += $13 != "yes"; if ($3 > 0) { c++; f += $11 == "yes"; bias += $10 }
  } END {
    printf "**%d of %d cells within max(1 frame, 5 %%) of the real engine in time; %d of %d capped cells within one frame; mean signed error over capped cells %+.2f frame** (%d cells on links whose timing was not valid)\n", t, n, f, c, c ? bias / c : 0, invalid
  }' "$summary" > "$work/summary-line.md"
{
  echo "# The GODOT3 model against the real Godot 3.2 engine"
  echo
  cat "$work/summary-line.md"
  echo
  echo "The real engine: Debian's godot3-server, headless, running clients/godot3/benchmark.gd (HTTPRequest, a fresh node per request, the next request started from the completion handler) inside \`twinbench shell\` behind each link of scenarios/real-clients/; the model: \`twinbench validate\` with the same profile (simulated). Model minus engine; one frame is 1/fps (uncapped: the 6.9 ms low-processor-mode sleep). link_valid: the link emulator kept its timing in every run of the link (the *-link.json reports)."
  echo
  echo "| link | scenario | fps | bytes | variant | engine ms | model ms | diff ms | diff frames | one frame | in time | link valid |"
  echo "|---|---|---:|---:|---|---:|---:|---:|---:|:---:|:---:|:---:|"
  tail -n +2 "$summary" | awk -F, '{ printf "| %s | %s | %s | %s | %s | %.1f | %.1f | %+.1f | %+.2f | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $10, $11, $12, $13 }'
  echo
  echo "The engine's run (run.txt):"
  echo
  sed 's/^/    /' "$work/run.txt"
} > "$work/summary.md"
if ((smoke)); then
  cat "$work/summary.md"
  # The smoke fails when a capped cell is more than a frame from the real engine on a valid link.
  outside=$(awk -F, 'NR > 1 && $3 > 0 && $11 == "no" && $13 == "yes"' "$summary")
  [ -z "$outside" ] || { echo "godot-reference: cells more than a frame from the engine:" >&2; echo "$outside" >&2; exit 1; }
  exit 0
fi
rm -rf "$out.partial"
mkdir -p "$out.partial"
cp "$work/summary.md" "$work/summary.csv" "$work/run.txt" "$out.partial/"
for link in "${links[@]}"; do
  mkdir -p "$out.partial/$link"
  cp "$work/$link/measured.csv" "$work/$link"/*-link.json "$out.partial/$link/"
  cp "$work/$link/validate/reproduction.md" "$out.partial/$link/validate.md"
done
rm -rf "$out"
mv "$out.partial" "$out"
echo "godot-reference: wrote $out/summary.md" >&2
head -3 "$out/summary.md" | tail -1 >&2
