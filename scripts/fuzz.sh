#!/usr/bin/env bash
# Builds the `fuzz` preset (clang 14, libFuzzer, ASan+UBSan) and runs each fuzz target of
# tests/fuzz, one at a time (--parallel N: N at once) at low priority, on a copy of its seed corpus.
#
#   bash scripts/fuzz.sh            each target to 10 million executions (--runs N), or --max-time
#                                   seconds if that comes first; writes results/reliability/fuzz.md
#   bash scripts/fuzz.sh --smoke    each target for 10 s (CI); writes nothing to results/
#   --targets a,b                   only these targets; the other rows of results/reliability/fuzz.md
#                                   are kept as they were, each row naming the run it came from
#   --timeout S                     libFuzzer's -timeout, seconds one input may take (default 10);
#                                   it counts wall time, so a fuzzer starved of CPU by other work
#                                   (at nice 15 it gets a few % of a core beside two busy jobs)
#                                   reports a "timeout" for an input that runs in under a second:
#                                   raise it for a long run on a machine that does other work too
#   --nice N                        the fuzzers' nice level (default 15)
#
# A finding (crash, sanitizer report, leak, timeout) leaves its input in build/fuzz/findings/<target>/
# and makes the script exit 1 (after running the other targets).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=10000000
max_time=0  # 0: no limit
parallel=1  # targets at once
smoke=0
out=results/reliability/fuzz.md
only=""  # ",a,b,": run only these targets
timeout=10
niceness=15
while (($#)); do
  case "$1" in
    --smoke) smoke=1; runs=0; max_time=10; shift ;;
    --runs) runs="$2"; shift 2 ;;
    --max-time) max_time="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --parallel) parallel="$2"; shift 2 ;;
    --targets) only=",$2,"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --nice) niceness="$2"; shift 2 ;;
    *) echo "usage: $0 [--smoke] [--runs N] [--max-time SECONDS] [--parallel N] [--targets a,b] [--timeout S] [--nice N] [--out FILE]" >&2; exit 2 ;;
  esac
done

# Target and its dictionary (tests/fuzz/dict/<dict>.dict; "-": none).
targets=(client_http:http client_tls:- server_http:http server_tls:- scenario:scenario
         measured_csv:measured_csv sweep_axis:sweep_axis pipelined_exchange:http)
# What runs: the --targets in their order (longest first keeps two at a time busy), else all.
run_list=()
for name in ${only//,/ }; do
  entry=$(printf '%s\n' "${targets[@]}" | grep -m1 "^$name:") ||
    { echo "fuzz: no target '$name'" >&2; exit 2; }
  run_list+=("$entry")
done
[ -n "$only" ] || run_list=("${targets[@]}")
selected() { [ -z "$only" ] || [[ "$only" == *",${1%%:*},"* ]]; }
run_id="$(date -u +%Y-%m-%d) $(git describe --always --dirty 2>/dev/null || echo unknown)"

cmake --preset fuzz >/dev/null
nice -n 5 cmake --build --preset fuzz

work=build/fuzz/run
rm -rf "$work" build/fuzz/findings
mkdir -p "$work" build/fuzz/findings
failed=0
# Runs one target; writes its table row to $work/<target>.row (and <target>.failed on a finding).
run_target() {
  local target=${1%%:*} dict=${1#*:}
  local corpus="$work/corpus/$target"  # grows as the fuzzer finds inputs; the seeds stay as committed
  local findings="build/fuzz/findings/$target"
  mkdir -p "$corpus" "$findings"
  local args=(-max_len=8192 "-timeout=$timeout" -rss_limit_mb=2048 -print_final_stats=1
              "-artifact_prefix=$findings/" -max_total_time="$max_time")
  ((runs > 0)) && args+=(-runs="$runs")
  [ "$dict" != - ] && args+=(-dict="tests/fuzz/dict/$dict.dict")
  echo "fuzz: $target (${runs} runs, max ${max_time} s)" >&2
  local start status=0
  start=$(date +%s)
  nice -n "$niceness" "build/fuzz/tests/fuzz/${target}_fuzz" "${args[@]}" "$corpus" \
    "tests/fuzz/corpus/$target" >"$work/$target.log" 2>&1 || status=$?
  local wall=$(($(date +%s) - start))
  local execs last cov ft corpus_files corpus_kib finding="none" reached="no"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target.log" | tail -1)
  # The last status line: "#N DONE cov: C ft: F corp: ..."
  last=$(grep -E '^#[0-9]+' "$work/$target.log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus_files=$(find "$corpus" -type f | wc -l)
  corpus_kib=$(find "$corpus" -type f -printf '%s\n' | awk '{s += $1} END {printf "%.0f", s / 1024}')
  if ((status != 0)); then
    touch "$work/$target.failed"
    finding="$(grep -m1 -E 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error' \
      "$work/$target.log" || echo "exit $status") ($(ls "$findings" | head -1))"
    echo "fuzz: $target: FINDING: $finding; log: $work/$target.log" >&2
  fi
  ((runs > 0 && ${execs:-0} >= runs)) && reached="yes"
  echo "fuzz: $target: ${execs:-?} executions in ${wall} s, cov ${cov:-?} ft ${ft:-?}" >&2
  echo "| $target | ${execs:-?} | $reached | $wall | $corpus_files ($corpus_kib KiB) | ${cov:-?} | ${ft:-?} | $finding | $run_id |" \
    >"$work/$target.row"
}

for entry in "${run_list[@]}"; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  run_target "$entry" &
done
wait
rows=()
reached=0
for entry in "${targets[@]}"; do
  target=${entry%%:*}
  if ! selected "$entry"; then
    # Not run this time: the row of the run that last did, if the results file has one.
    row=$(grep -m1 "^| $target |" "$out" 2>/dev/null || true)
    [ -n "$row" ] || row="| $target | - | no | - | - | - | - | not run | - |"
    rows+=("$row")
    grep -q '| yes |' <<<"$row" && reached=$((reached + 1))
    continue
  fi
  [ -e "$work/$target.failed" ] && failed=1
  rows+=("$(cat "$work/$target.row")")
  grep -q '| yes |' "$work/$target.row" && reached=$((reached + 1))
done

if ((smoke)); then
  exit "$failed"
fi

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
tmp=$(mktemp "$(dirname "$out")/.fuzz.md.XXXXXX")
{
  echo "# Fuzzing: executions, coverage and findings"
  echo
  echo "Generated by \`bash scripts/fuzz.sh$([ -n "$only" ] && echo " --targets ${only:1:-1}")$([ "$runs" != 10000000 ] && echo " --runs $runs")$(
    ((max_time > 0)) && echo " --max-time $max_time")$( ((parallel > 1)) && echo " --parallel $parallel")$(
    ((timeout != 10)) && echo " --timeout $timeout")$( ((niceness != 15)) && echo " --nice $niceness")\` on $(date -u +%Y-%m-%d)."
  echo "Code: commit ${run_id#* } (at the start of the run). Goal: $runs executions"
  echo "per target$( ((max_time > 0)) && echo ", or $max_time s, whichever comes first"): **$reached of"
  echo "${#targets[@]} targets reached $runs executions**."
  echo "Machine: $cpu, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at"
  echo "the end; preset \`fuzz\` (clang 14, RelWithDebInfo, libFuzzer with ASan and UBSan, UBSan"
  echo "fatal). $parallel target(s) at a time under \`nice -n $niceness\`, each from its seed corpus"
  echo "(tests/fuzz/corpus/<target>/) with -max_len=8192, -timeout=$timeout s, -rss_limit_mb=2048."
  echo "Coverage is libFuzzer's final count of covered edges (cov) and features (ft)."
  [ -n "$only" ] && echo "Only ${only:1:-1} ran this time, as above; each row names the run (date, commit) it comes from (the other runs: nice 15, -timeout=10 s)."
  echo
  echo "| Target | Executions | Goal reached | Wall time (s) | Corpus at the end | cov | ft | Findings | Run |"
  echo "|---|---:|---|---:|---:|---:|---:|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "What each target feeds (tests/fuzz/*.cpp): client_http, the client core a server's bytes"
  echo "(heads, Content-Length, chunked and read-until-close bodies, keep-alive, early close, heads"
  echo "over the limit); client_tls, the same behind the client's TLS transport (TLS records);"
  echo "server_http and server_tls, the server connection a client's bytes; scenario, the scenario"
  echo "and profile loader; measured_csv, the measured-CSV reader; sweep_axis, the axis and shard"
  echo "grammar with the grid it spans."
} >"$tmp"
mv "$tmp" "$out"
echo "fuzz: wrote $out" >&2
exit "$failed"
