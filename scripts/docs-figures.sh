#!/usr/bin/env bash
# Rewrites the figures that README.md and docs/*.md quote from the committed results/, so that the
# prose never drifts from the files. A quoted figure sits between two markers on one line,
#   <!-- NAME -->generated text<!-- /NAME -->
# (HTML comments: invisible in the rendered page), and this script replaces the text between them
# with what the generator of NAME (the table `figure` below) makes of the results files. A figure
# that no generator can make from a results file is not quoted as a number: the prose points at
# the file instead (or dates it, when it was measured by hand on a given day).
#
# Usage: bash scripts/docs-figures.sh           rewrite every marker in place (each file atomically)
#        bash scripts/docs-figures.sh --check   change nothing; list each FILE:LINE whose marker
#                                               text is out of date
# Exit: 0 all current (or rewritten); 1 (--check) some marker out of date; 2 a marker names an
# unknown figure, its results file, line or column is missing, or a start marker has no end marker
# on its line. Such a marker keeps its text (the others are still rewritten) and is reported as
# FILE:LINE: marker NAME: what is missing.
# Needs only bash, coreutils, awk (POSIX; Debian's mawk), sed and grep; no network, no build.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# ---------------------------------------------------------------------------------------------
# Helpers. A generator prints its figure on stdout, or says on stderr which file, line or column
# is missing and returns 1.

need() {
  local f
  for f in "$@"; do [ -r "$f" ] || { echo "$f is missing" >&2; return 1; }; done
}

# line FILE ERE: the first line of FILE matching ERE.
line() {
  need "$1" || return 1
  grep -m1 -E -e "$2" "$1" || { echo "$1: no line matching /$2/" >&2; return 1; }
}

# calc FORMAT EXPR...: awk's printf of the expressions.
calc() { local f=$1; shift; awk "BEGIN { printf \"$f\", $(IFS=,; echo "$*") }"; }

# Shared awk functions:
#   take(x)            adds x to the range lo..hi (nt values so far);
#   rng(lo, hi, fmt)   "lo-hi", or one value when both print alike;
#   size(bytes)        a body size as the docs name it ("400 KiB");
#   abs(x).
AWK_LIB='
function abs(x) { x += 0; return x < 0 ? -x : x }
function take(x) { x += 0; if (!nt++ || x < lo) lo = x; if (nt == 1 || x > hi) hi = x }
function rng(lo, hi, fmt,   a, b) { a = sprintf(fmt, lo); b = sprintf(fmt, hi); return a == b ? a : a "-" b }
function size(b) {
  if (b == 0) return "pings"
  if (b % 1048576 == 0) return b / 1048576 " MiB"
  if (b % 1024 == 0) return b / 1024 " KiB"
  return b " bytes"
}
'

# range FORMAT UNIT: the range of the numbers on stdin, "3-5 ms".
range() { awk -v f="$1" -v u="$2" "$AWK_LIB"'{ take($1) } END { if (!nt) exit 1; printf "%s%s", rng(lo, hi, f), u }'; }

# csv FILE COLUMNS [AWK OPTION...] PROGRAM: runs the awk PROGRAM over FILE's rows, where v("name")
# is a field by its header name (quoted fields may hold commas). Fails naming FILE and the column
# when the header lacks one of the comma-separated COLUMNS.
CSV_PRELUDE='
function splitcsv(s, a,   n, c) {
  split("", a); n = 0
  while (1) {
    if (substr(s, 1, 1) == "\"") {
      c = index(substr(s, 2), "\""); a[++n] = substr(s, 2, c - 1); s = substr(s, c + 2)
    } else {
      c = index(s, ","); if (c == 0) { a[++n] = s; break }
      a[++n] = substr(s, 1, c - 1); s = substr(s, c)
    }
    if (s == "") break
    s = substr(s, 2)   # the comma
  }
  return n
}
function v(name) { return F[col[name]] }
FNR == 1 {
  nh = splitcsv($0, hdr); for (i = 1; i <= nh; i++) col[hdr[i]] = i
  nn = split(need, nd, ",")
  for (i = 1; i <= nn; i++) if (!(nd[i] in col)) {
    printf "%s has no column %s\n", FILENAME, nd[i] > "/dev/stderr"; bad = 1; exit 2
  }
  next
}
{ splitcsv($0, F) }
END { if (bad) exit 2 }
'
csv() {
  local file=$1 cols=$2; shift 2
  local prog=${!#}
  need "$file" || return 1
  awk -v need="$cols" "${@:1:$#-1}" "$AWK_LIB$CSV_PRELUDE$prog" "$file"
}

# --- results/compare/compare.csv (twinbench compare, scripts/compare-grid.sh) ------------------
# compare_rows PROGRAM: csv over compare.csv with, per row: rtt, rate, cc (from the point), fps,
# bytes, variant, sess (a Session variant), out (outside max(1 frame, 5 %) in time) and edge
# (capped, and within one frame in frame counts). Needs the within_time and within_frames columns.
COMPARE=results/compare/compare.csv
CMP_ROW='
{
  np = split(v("point"), kv, ","); rtt = rate = cc = ""
  for (i = 1; i <= np; i++) {
    split(kv[i], p, "=")
    if (p[1] == "rtt_ms") rtt = p[2] + 0
    else if (p[1] == "rate_mbps") rate = p[2] + 0
    else if (p[1] == "cc") cc = p[2]
  }
  fps = v("fps") + 0; bytes = v("body_bytes") + 0; variant = v("variant"); sess = variant ~ /^c3s_/
  out = v("within_time") == "no"; edge = v("within_frames") == "yes"
}
'
compare_rows() { csv "$COMPARE" point,fps,body_bytes,variant,within_time,within_frames "$CMP_ROW$1"; }

# The kinds that docs/tcp-model.md's table sorts the cells outside in time into.
K_BBR_SESSION='out && !edge && cc == "bbr" && sess'
K_BBR_FRESH='out && !edge && cc == "bbr" && !sess'
K_CUBIC_SESSION='out && !edge && cc == "cubic" && sess'
K_CUBIC_FRESH='out && !edge && cc == "cubic" && !sess'
K_FRAME_EDGE='out && edge'

# cmp_summary: the summary line of compare.md, from the CSV.
cmp_summary() {
  compare_rows '
    { cells++; if (v("within_time") == "yes") wt++
      if (v("within_frames") != "") { capped++; if (v("within_frames") == "yes") wf++ } }
    END {
      if (!cells || !capped) { print FILENAME ": no cells" > "/dev/stderr"; exit 1 }
      printf "%d of %d cells (%.0f %%) within max(1 frame, 5 %%) in time; ", wt, cells, 100 * wt / cells
      printf "%d of %d capped cells (%.0f %%) within one frame in frame counts", wf, capped, 100 * wf / capped
    }'
}
# cmp_count FILTER: how many cells match.
cmp_count() { compare_rows "($1) { n++ } END { printf \"%d\", n }"; }
# cmp_range FILTER EXPR FORMAT UNIT: the range of EXPR over the matching cells, "272-283 ms".
cmp_range() {
  compare_rows "($1) { take($2) }
    END { if (!nt) { print FILENAME \": no cell matches $1\" > \"/dev/stderr\"; exit 1 }
          printf \"%s %s\", rng(lo, hi, \"$3\"), \"$4\" }"
}
# cmp_where FILTER: the matching cells grouped by path, most first ("400 KiB and 1 MiB at 100 ms /
# 20 Mbit/s (5), ..."), with ", 60 fps" (the grid's only cap) or ", uncapped" when all of a
# group's cells are so; "none".
cmp_where() {
  local groups
  groups=$(compare_rows "($1) {
      g = rtt SUBSEP rate
      if (!(g in n)) { order[++ng] = g; R[g] = rtt; B[g] = rate }
      n[g]++; if (fps > 0) capped[g]++
      if (!((g, bytes) in has)) { has[g, bytes] = 1; sz[g, ++ns[g]] = bytes }
    }
    END {
      for (k = 1; k <= ng; k++) {
        g = order[k]; m = ns[g]
        for (i = 2; i <= m; i++)   # sizes ascending (insertion sort)
          for (j = i; j > 1 && sz[g, j - 1] > sz[g, j]; j--) { t = sz[g, j]; sz[g, j] = sz[g, j - 1]; sz[g, j - 1] = t }
        s = size(sz[g, 1]); for (i = 2; i <= m; i++) s = s (i == m ? \" and \" : \", \") size(sz[g, i])
        f = capped[g] == n[g] ? \", 60 fps\" : capped[g] == 0 ? \", uncapped\" : \"\"
        printf \"%d\t%d\t%d\t%s at %s ms / %s Mbit/s%s (%d)\n\", n[g], R[g], B[g], s, R[g], B[g], f, n[g]
      }
    }") || return 1
  if [ -z "$groups" ]; then echo none; return; fi
  sort -t$'\t' -k1,1nr -k2,2nr -k3,3n <<< "$groups" | cut -f4 | awk 'NR > 1 { printf ", " } { printf "%s", $0 }'
}
# cmp_fresh_cubic: "none is" or "N are".
cmp_fresh_cubic() {
  local n; n=$(cmp_count "$K_CUBIC_FRESH") || return 1
  if [ "$n" = 0 ]; then echo "none is"; else echo "$n are"; fi
}
# Columns of either format of compare.csv: the emulated path's timing.
cmp_lateness() {   # FORMAT: the range (or with "max" the largest) of the points' packet lateness p99
  csv "$COMPARE" emu_lateness_p99_us -v max="${1:-}" '{ take(v("emu_lateness_p99_us")) }
    END { if (!nt) exit 1; if (max) printf "%.0f µs", hi; else printf "%s µs", rng(lo, hi, "%.0f") }'
}
cmp_validity() {
  csv "$COMPARE" emu_path_valid '{ n++; if (v("emu_path_valid") != "yes") bad++ }
    END { if (!n) exit 1; if (bad) printf "%d cells from runs whose timing was invalid", bad; else printf "no run invalid" }'
}

# --- results/compare/kernel/ (the recorded kernel run) ----------------------------------------
KERNEL_TXT=results/compare/kernel/kernel.txt
kernel_date() {   # "2026-12-07 03:34 UTC"
  local d; d=$(line "$KERNEL_TXT" '^date: [0-9-]+T[0-9]+:[0-9]+') || return 1
  sed -E 's/^date: ([0-9-]+)T([0-9]+:[0-9]+).*/\1 \2 UTC/' <<< "$d"
}
kernel_run() {    # "2026-12-07 03:34 UTC (machine; 2115 s)"
  local d m t
  d=$(kernel_date) && m=$(line "$KERNEL_TXT" '^machine: ') && t=$(line "$KERNEL_TXT" ': [0-9]+ s wall') || return 1
  printf '%s (%s; %s s)' "$d" "${m#machine: }" "$(sed -E 's/.*: ([0-9]+) s wall.*/\1/' <<< "$t")"
}
# kernel_wakeups: the range over the grid's points of the client's wake-up lateness p99
# (run.host_timing.p99_us).
kernel_wakeups() {
  local files=(results/compare/kernel/points/*/emulated/results.json) f x all=()
  need "${files[0]}" || return 1
  for f in "${files[@]}"; do
    x=$(grep -m1 -E '"p99_us": *[0-9.]+' "$f" | sed -E 's/.*"p99_us": *([0-9.]+).*/\1/')
    [ -n "$x" ] || { echo "$f: no host_timing p99_us" >&2; return 1; }
    all+=("$x")
  done
  printf '%s\n' "${all[@]}" | range %.0f ' µs'
}

# --- results/compare/captures.md (scripts/compare-captures.sh) --------------------------------
CAPTURES=results/compare/captures.md
cap_run() {       # the date it was generated
  local l; l=$(line "$CAPTURES" '^Generated by .* on [0-9-]+, commit') || return 1
  sed -E 's/.* on ([0-9-]+), commit/\1/' <<< "$l"
}
# cap_times SCENARIO TWIN: the measured request times (not the warmup), one per line; TWIN is
# "simulation" or "kernel (emulated)".
cap_times() {
  need "$CAPTURES" || return 1
  awk -v sc="## $1:" -v twin="| $2 |" '
    index($0, "## ") == 1 { on = index($0, sc) == 1 }
    on && index($0, twin) == 1 {
      s = $0; sub(/^[^|]*\|[^|]*\| *w [0-9.]+, */, "", s); sub(/ *\|.*$/, "", s)
      n = split(s, t, /, */); for (i = 1; i <= n; i++) print t[i]; found = 1
    }
    END { if (!found) { printf "%s: no request times of %s in %s\n", FILENAME, twin, sc > "/dev/stderr"; exit 1 } }' "$CAPTURES"
}
# cap_range SCENARIO TWIN: "619 ms" or "647-661 ms".
cap_range() { local t; t=$(cap_times "$1" "$2") || return 1; range %.0f ' ms' <<< "$t"; }
# cap_slow SCENARIO TWIN: "N of M": the measured rounds over 1.5 times the fastest.
cap_slow() {
  local t; t=$(cap_times "$1" "$2") || return 1
  awk "$AWK_LIB"'{ t[NR] = $1; take($1) } END { for (i = 1; i <= NR; i++) if (t[i] > 1.5 * lo) n++; printf "%d of %d", n, NR }' <<< "$t"
}
# cap_outcomes SCENARIO: "271 ms (no loss) and 462-558 ms": both twins' fastest round and the range
# of their rounds over 1.5 times that.
cap_outcomes() {
  local t; t=$(cap_times "$1" simulation && cap_times "$1" "kernel (emulated)") || return 1
  awk "$AWK_LIB"'{ t[NR] = $1; take($1) }
    END { fast = lo; nt = 0; for (i = 1; i <= NR; i++) if (t[i] > 1.5 * fast) take(t[i])
          printf "%.0f ms (no loss) and %s ms", fast, rng(lo, hi, "%.0f") }' <<< "$t"
}
# cap_gap SCENARIO: how much faster the simulation's median is than each kernel round, "4-6 %".
cap_gap() {
  local s k
  s=$(cap_times "$1" simulation) && k=$(cap_times "$1" "kernel (emulated)") || return 1
  s=$(sort -n <<< "$s" | awk '{ t[NR] = $1 } END { print NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2 }')
  awk -v s="$s" '{ print ($1 - s) / $1 * 100 }' <<< "$k" | range %.0f ' %'
}
# cap_flights SCENARIO SIDE: the server flights (SIDE: sim or emulated) of the connection that
# moved the most bytes (the kept-alive one), "start_s packets bytes duration_ms" per line.
cap_flights() {
  need "$CAPTURES" || return 1
  awk -v sc="## $1:" -v side="Server flights, $2:" '
    index($0, "## ") == 1 { on = index($0, sc) == 1 }
    on && $0 == side { inside = 1; next }
    inside && /^```/ { if (++fence == 2) inside = fence = 0; next }
    inside && /^connection from/ { c++; b = $0; sub(/^.*: /, "", b); bytes[c] = b + 0; next }
    inside && /^ +at / {   # "  at    2.611 s:    10 packets,     13134 bytes over     4.9 ms"
      l = $0; gsub(/[^0-9. ]/, " ", l); split(l, f, / +/); fl[c, ++nf[c]] = f[2] " " f[3] " " f[4] " " f[5]
    }
    END {
      for (i = 1; i <= c; i++) if (!best || bytes[i] > bytes[best]) best = i
      if (!best) { printf "%s: no flights for %s in %s\n", FILENAME, side, sc > "/dev/stderr"; exit 1 }
      for (i = 1; i <= nf[best]; i++) print fl[best, i]
    }' "$CAPTURES"
}
# cap_burst SCENARIO SIDE MIN_BYTES [rate]: how long the last flight of at least MIN_BYTES took,
# "59 ms" (with "rate": "59 ms, 55 Mbit/s").
cap_burst() {
  local f; f=$(cap_flights "$1" "$2") || return 1
  awk -v min="$3" -v rate="${4:-}" '$3 >= min { d = $4; b = $3; n++ }
    END { if (!n) { print "no flight of " min " bytes" > "/dev/stderr"; exit 1 }
          printf "%.0f ms", d; if (rate != "") printf ", %.0f Mbit/s", b * 8 / d / 1000 }' <<< "$f"
}
# cap_restart SCENARIO SIDE: the packets of the last flight sent after an idle gap over 0.5 s: the
# window the kept-alive connection restarts with.
cap_restart() {
  local f; f=$(cap_flights "$1" "$2") || return 1
  awk 'NR > 1 && $1 - end > 0.5 { p = $2; n++ } { end = $1 + $4 / 1000 }
    END { if (!n) { print "no flight after an idle gap" > "/dev/stderr"; exit 1 } printf "%d packets", p }' <<< "$f"
}

# --- results/bench/sim_throughput.md (scripts/bench.sh) ---------------------------------------
BENCH=results/bench/sim_throughput.md
BENCH_PLAIN='^### .*HTTP, CUBIC'
BENCH_PROFILE='^### the lightsail-2026 profile [(]what reproduce simulates[)]'
bench_run() {     # "machine, date"
  local l; l=$(line "$BENCH" '^Measured [0-9-]+ on ') || return 1
  sed -E 's/^Measured ([0-9-]+) on (.*),$/\2, \1/' <<< "$l"
}
# bench_rows SECTION: the rows of the section whose heading matches SECTION, as
# "MiB|twinbench events|BulkSend events|rate vs BulkSend (range)", then "ratio|3.9x" (the 32/8 MiB
# CPU time ratio).
bench_rows() {
  need "$BENCH" || return 1
  awk -v sec="$1" '
    /^### / { on = $0 ~ sec; if (on) found = 1 }
    on && /^\| *[0-9]+ MiB \|/ {
      split($0, a, /\|/); m = a[2]; gsub(/[^0-9]/, "", m); r = a[11]; gsub(/^ +| +$/, "", r)
      print m "|" a[5] + 0 "|" a[9] + 0 "|" r; rows++
    }
    on && /^32 MiB \/ 8 MiB CPU time: twinbench / { r = $0; sub(/.*twinbench /, "", r); sub(/,.*/, "", r); print "ratio|" r }
    END { if (!found || rows != 3) { printf "%s: no section /%s/ with 1, 8 and 32 MiB rows\n", FILENAME, sec > "/dev/stderr"; exit 1 } }' "$BENCH"
}
# bench_goal SECTION GOAL: "met at all three sizes: 1 MiB 1.63x (blocks 1.53-1.78), 8 MiB 2.43x,
# 32 MiB 8.19x; 32/8 MiB CPU time 3.9x".
bench_goal() {
  local r; r=$(bench_rows "$1") || return 1
  awk -F'|' -v goal="$2" '
    function add(list, s) { return list (list == "" ? "" : " and ") s }
    $1 == "ratio" { ratio = $2; next }
    { med = $4; sub(/ .*/, "", med); blk = $4; sub(/^[^(]*\(/, "", blk); sub(/\).*/, "", blk)
      fig = fig (fig == "" ? "" : ", ") $1 " MiB " med ($1 == 1 ? " (blocks " blk ")" : "")
      if ($4 + 0 >= goal) met = add(met, $1 " MiB"); else miss = add(miss, $1 " MiB") }
    END {
      v = miss == "" ? "met at all three sizes" : met == "" ? "not met at any size" : "met at " met ", not at " miss
      printf "%s: %s; 32/8 MiB CPU time %s", v, fig, ratio
    }' <<< "$r"
}
# bench_events SECTION: how many more ns-3 events twinbench's 1 MiB download executes than
# BulkSend's, "12 %".
bench_events() {
  local r; r=$(bench_rows "$1") || return 1
  awk -F'|' '$1 == 1 { printf "%.0f %%", ($2 / $3 - 1) * 100 }' <<< "$r"
}
# bench_events_per_mib SECTION: "10 % more per byte (4991 events per MiB at 32 MiB against 4537 at
# 8 MiB)".
bench_events_per_mib() {
  local r; r=$(bench_rows "$1") || return 1
  awk -F'|' '$1 == 8 { e8 = $2 / 8 } $1 == 32 { e32 = $2 / 32 }
    END { printf "%.0f %% more per byte (%.0f events per MiB at 32 MiB against %.0f at 8 MiB)", (e32 / e8 - 1) * 100, e32, e8 }' <<< "$r"
}

# --- results/load/live/ (scripts/load-matrix.sh, scripts/nagle-stall.sh) ----------------------
LOAD=results/load/live/summary.csv
TB=twinbench-http
load_run() {      # "machine, date"
  local g m
  g=$(line results/load/live/summary.md '^Generated by .* on [0-9-]+') &&
    m=$(line results/load/live/summary.md '^Machine: ') || return 1
  printf '%s, %s' "$(sed -E 's/^Machine: (.*)\.$/\1/' <<< "$m")" "$(sed -E 's/.* on ([0-9-]+).*/\1/' <<< "$g")"
}
# lv FIELD LABEL: one figure of one cell of the matrix.
lv() {
  csv "$LOAD" "label,$1" -v f="$1" -v l="$2" '
    v("label") == l { print v(f); n++ }
    END { if (!n) { printf "%s: no cell %s\n", FILENAME, l > "/dev/stderr"; exit 1 } }'
}
# kreq LABEL...: the cells' median req/s in thousands, "207/148/157/209 k".
kreq() {
  local l x out=()
  for l in "$@"; do x=$(lv rps_median "$l") || return 1; out+=("$(calc %.0f "$x / 1000")"); done
  (IFS=/; echo "${out[*]} k")
}
# p99_range LABEL...: the range of the cells' median p99, "3-5 ms".
p99_range() {
  local l x all=()
  for l in "$@"; do x=$(lv p99_ms_median "$l") || return 1; all+=("$x"); done
  printf '%s\n' "${all[@]}" | range %.0f ' ms'
}
load_stall() {
  local c=$TB-shared-4-nagle-on-split m lo hi
  m=$(lv p99_ms_median $c) && lo=$(lv p99_ms_min $c) && hi=$(lv p99_ms_max $c) || return 1
  calc 'p99 %.0f ms (every repetition %.1f-%.1f ms)' "$m" "$lo" "$hi"
}
# load_https: what TLS costs, per server: the range over its cells of HTTP req/s over HTTPS req/s
# of the same configuration, with the HTTPS and the HTTP ranges.
load_https() {
  csv "$LOAD" label,tls,rps_median '
    function put(key, x) { if (!((s, key, "lo") in m) || x < m[s, key, "lo"]) m[s, key, "lo"] = x
                           if (x > m[s, key, "hi"]) m[s, key, "hi"] = x }
    function of(srv, key) { return rng(m[srv, key, "lo"], m[srv, key, "hi"], key == "x" ? "%.1f" : "%.0f") }
    { c = v("label"); sub(/-https?-/, "-", c); s = c; sub(/-.*/, "", s); server[c] = s
      r[c, v("tls")] = v("rps_median") / 1000; put(v("tls"), v("rps_median") / 1000) }
    END {
      for (c in server) if (((c, "http") in r) && ((c, "https") in r)) { s = server[c]; put("x", r[c, "http"] / r[c, "https"]) }
      if (!(("twinbench", "x", "lo") in m) || !(("nginx", "x", "lo") in m)) { print FILENAME ": no HTTP/HTTPS pairs" > "/dev/stderr"; exit 1 }
      printf "%sx over HTTP per cell in twinbench'\''s rows (%s k req/s against %s k), ", of("twinbench", "x"), of("twinbench", "https"), of("twinbench", "http")
      printf "%sx in nginx'\''s (%s k against %s k)", of("nginx", "x"), of("nginx", "https"), of("nginx", "http")
    }'
}
NAGLE=results/load/live/nagle-stall.md
nagle_run() {     # "machine, date; note"
  local g m note
  g=$(line "$NAGLE" '^Generated by .* on [0-9-]+') && m=$(line "$NAGLE" '^Machine: ') || return 1
  note=$(sed -nE 's/.*Note: (.*)\.$/; \1/p' <<< "$m")
  printf '%s, %s%s' "$(sed -E 's/^Machine: ([^,]*, [^,]*, [^,]*),.*/\1/' <<< "$m")" "$(sed -E 's/.* on ([0-9-]+).*/\1/' <<< "$g")" "$note"
}
# nagle_cell ROW COLUMN: "20 req/s at p50 44.0 ms", from the table row whose first cell starts with
# ROW, in COLUMN 1 (Nagle on) or 2 (Nagle off).
nagle_cell() {
  local l; l=$(line "$NAGLE" "^\\| $1") || return 1
  awk -F'|' -v c="$2" '{
      nw = split($(c + 2), w, /[ ,]+/)
      for (i = 1; i < nw; i++) { if (w[i + 1] == "req/s") r = w[i]; if (w[i] == "p50") p = w[i + 1] }
      if (r == "" || p == "") exit 1
      if (r < 1000) printf "%d req/s", r; else printf "%.0f k req/s", r / 1000
      if (p < 1) printf " at p50 %.2f ms", p; else printf " at p50 %.1f ms", p
    }' <<< "$l" || { echo "$NAGLE: no req/s and p50 in column $2 of the row '$1'" >&2; return 1; }
}

# --- results/load/simulated/sweep.csv (scripts/load-sim.sh) -----------------------------------
LOADSIM=results/load/simulated/sweep.csv
# loadsim WHAT, of the 20 KiB downloads against a client alone: "more", the clients from which
# each variant takes at least a frame more (median and p99); "tail", the clients from which each
# one's p99 is at least twice its own alone, with those p99s; "most", the largest load's medians.
loadsim() {
  csv "$LOADSIM" clients,body_bytes,variant,median_frames,p99_frames -v what="$1" '
    v("body_bytes") + 0 == 20480 {
      c = v("clients") + 0; x = v("variant"); var[x] = 1; n[c] = 1; if (c > most) most = c
      med[c, x] = v("median_frames") + 0; p99[c, x] = v("p99_frames") + 0
    }
    END {
      if (!(1 in n)) { print FILENAME ": no 20 KiB cells with one client" > "/dev/stderr"; exit 1 }
      for (c = 2; c <= most; c++) if (c in n) {
        more = tail = 1
        for (x in var) {
          if (med[c, x] < med[1, x] + 1 || p99[c, x] < p99[1, x] + 1) more = 0
          if (p99[c, x] < 2 * p99[1, x]) tail = 0
        }
        if (more && !cmore) cmore = c; if (tail && !ctail) ctail = c
      }
      if (what == "more") { if (!cmore) exit 1; printf "from %d clients", cmore }
      if (what == "tail") {
        if (!ctail) exit 1
        for (x in var) take(p99[ctail, x]); at = rng(lo, hi, "%.0f"); nt = 0
        for (x in var) take(p99[1, x])
        printf "from %d (p99 %s frames against %s alone)", ctail, at, rng(lo, hi, "%.0f")
      }
      if (what == "most") { for (x in var) take(med[most, x]); printf "at %d clients the median is %s frames", most, rng(lo, hi, "%.0f") }
    }'
}

# --- results/sweep-example/*.csv (scripts/example-sweep.sh) -----------------------------------
sweep_points() {  # "260 points": the distinct points of the sweeps' CSVs
  local f n total=0 files=(results/sweep-example/*.csv)
  need "${files[0]}" || return 1
  for f in "${files[@]}"; do
    n=$(csv "$f" point '!(v("point") in seen) { seen[v("point")] = 1; n++ } END { print n + 0 }') || return 1
    total=$((total + n))
  done
  echo "$total points"
}

# --- results/reproduction/ (twinbench reproduce) ----------------------------------------------
REPRO=results/reproduction/reproduction.csv
# repro_frames BYTES FORMAT VARIANT...: how many frames the simulated medians of those 60 fps
# file-download cells are off the published ones, "5-6 frames fast".
repro_frames() {
  local bytes=$1 fmt=$2; shift 2
  csv "$REPRO" scenario,fps,body_bytes,variant,published_ms,simulated_ms -v b="$bytes" -v want=" $* " -v fmt="$fmt" '
    v("scenario") == "file_download" && v("fps") + 0 == 60 && v("body_bytes") + 0 == b + 0 && index(want, " " v("variant") " ") {
      x = (v("simulated_ms") - v("published_ms")) / (1000 / 60); if (x < 0) neg++; take(abs(x))
    }
    END {
      if (!nt) { printf "%s: no 60 fps %s-byte file-download cell of%s\n", FILENAME, b, want > "/dev/stderr"; exit 1 }
      r = rng(lo, hi, fmt)
      printf "%s %s %s", r, r == "1" ? "frame" : "frames", neg == nt ? "fast" : neg ? "off" : "slow"
    }'
}
# repro_sim_max CELL VARIANT: the simulated maximum of a file-download cell (CELL: "60 fps, 1 MB"),
# from reproduction.md's five-number summaries.
repro_sim_max() {
  local l; l=$(line results/reproduction/reproduction.md "^\\| file_download \\| $1 \\| $2 \\|") || return 1
  awk -F'|' '{ s = $9; sub(/.*\/ */, "", s); sub(/ *$/, "", s); printf "%s ms", s }' <<< "$l"
}

# ---------------------------------------------------------------------------------------------
# The figures: marker name -> generator, grouped by the results file they read. (A generator that
# prints anything on stderr has failed, so the ones that join several figures need no checks.)
figure() {
  case "$1" in
    # results/reproduction/wall-time.txt (scripts/time-reproduce.sh): its first line
    reproduce-time) line results/reproduction/wall-time.txt '^twinbench reproduce: ' ;;
    # results/reproduction/reproduction.csv and .md (twinbench reproduce)
    repro-fresh-32m-frames) repro_frames 33554432 %.0f c3_coop c3_thr ;;
    repro-session-32m-frames) repro_frames 33554432 %.0f c3s_coop ;;
    repro-session-1m-frames) repro_frames 1048576 %.2f c3s_coop ;;
    repro-session-1m-sim-max) repro_sim_max "60 fps, 1 MB" c3s_coop ;;
    # results/real-clients/godot3/summary.md (scripts/godot-reference.sh): its summary line
    godot3-summary) line results/real-clients/godot3/summary.md '^\*\*[0-9]+ of [0-9]+ cells' | sed 's/\*\*//g; s/ (\([0-9]* cells on links whose timing was not valid\))/; \1/' ;;
    # results/compare/compare.csv (scripts/compare-grid.sh), its within_time/within_frames columns
    compare-summary) cmp_summary ;;
    compare-outside) cmp_count out ;;
    compare-kind-bbr-session-n) cmp_count "$K_BBR_SESSION" ;;
    compare-kind-bbr-session-where) cmp_where "$K_BBR_SESSION" ;;
    compare-kind-bbr-fresh-n) cmp_count "$K_BBR_FRESH" ;;
    compare-kind-bbr-fresh-where) cmp_where "$K_BBR_FRESH" ;;
    compare-kind-cubic-session-n) cmp_count "$K_CUBIC_SESSION" ;;
    compare-kind-cubic-session-where) cmp_where "$K_CUBIC_SESSION" ;;
    compare-kind-frame-edge-n) cmp_count "$K_FRAME_EDGE" ;;
    compare-kind-frame-edge-where) cmp_where "$K_FRAME_EDGE" ;;
    compare-kind-frame-edge-diff) cmp_range "$K_FRAME_EDGE" 'abs(v("diff_ms"))' %.2f ms ;;
    compare-kind-cubic-fresh) cmp_fresh_cubic ;;
    compare-bbr-session-400k-sim) cmp_range "$K_BBR_SESSION && rtt == 100 && rate == 20 && bytes == 409600" 'v("sim_median_ms")' %.0f ms ;;
    compare-bbr-session-400k-kernel) cmp_range "$K_BBR_SESSION && rtt == 100 && rate == 20 && bytes == 409600" 'v("emu_median_ms")' %.0f ms ;;
    compare-bbr-session-8m-pct) cmp_range "$K_BBR_SESSION && bytes == 8388608" 'abs(v("diff_pct"))' %.0f % ;;
    compare-bbr-fresh-40ms-pct) cmp_range "$K_BBR_FRESH && rtt == 40 && rate == 20" 'abs(v("diff_pct"))' %.0f % ;;
    compare-bbr-fresh-10ms-pct) cmp_range "$K_BBR_FRESH && rtt == 10 && rate == 100" 'abs(v("diff_pct"))' %.0f % ;;
    compare-bbr-fresh-10ms-sim) cmp_range "$K_BBR_FRESH && rtt == 10 && rate == 100" 'v("sim_median_ms")' %.0f ms ;;
    compare-bbr-fresh-10ms-kernel) cmp_range "$K_BBR_FRESH && rtt == 10 && rate == 100" 'v("emu_median_ms")' %.0f ms ;;
    compare-bbr-fresh-8m-pct) cmp_range "$K_BBR_FRESH && bytes == 8388608" 'abs(v("diff_pct"))' %.0f % ;;
    compare-cubic-session-ms) cmp_range "$K_CUBIC_SESSION" 'abs(v("diff_ms"))' %.0f ms ;;
    compare-cubic-session-pct) cmp_range "$K_CUBIC_SESSION" 'abs(v("diff_pct"))' %.0f % ;;
    # results/compare/compare.csv, columns of either format: the emulated path's timing
    compare-lateness-range) cmp_lateness ;;
    compare-lateness-max) cmp_lateness max ;;
    compare-validity) cmp_validity ;;
    # results/compare/kernel/kernel.txt and kernel/points/*/emulated/results.json (the kernel run)
    compare-kernel-run) kernel_run ;;
    compare-kernel-date) kernel_date ;;
    compare-wakeup-range) kernel_wakeups ;;
    # results/compare/captures.md (scripts/compare-captures.sh)
    captures-run) cap_run ;;
    captures-bbr-20mbit-outcomes) cap_outcomes bbr_session_20mbit ;;
    captures-bbr-20mbit-sim-slow) cap_slow bbr_session_20mbit simulation ;;
    captures-bbr-20mbit-kernel-slow) cap_slow bbr_session_20mbit "kernel (emulated)" ;;
    captures-bbr-20mbit-kernel-burst) cap_burst bbr_session_20mbit emulated 405000 rate ;;
    captures-bbr-20mbit-sim-burst) cap_burst bbr_session_20mbit sim 405000 ;;
    captures-cubic-20mbit-kernel-restart) cap_restart cubic_session_20mbit emulated ;;
    captures-cubic-20mbit-sim-restart) cap_restart cubic_session_20mbit sim ;;
    captures-cubic-20mbit-sim) cap_range cubic_session_20mbit simulation ;;
    captures-cubic-20mbit-kernel) cap_range cubic_session_20mbit "kernel (emulated)" ;;
    captures-cubic-fresh-sim) cap_range cubic_fresh_10ms simulation ;;
    captures-cubic-fresh-kernel) cap_range cubic_fresh_10ms "kernel (emulated)" ;;
    captures-bbr-fresh-sim) cap_range bbr_fresh_40ms simulation ;;
    captures-bbr-fresh-kernel) cap_range bbr_fresh_40ms "kernel (emulated)" ;;
    captures-bbr-fresh-gap) cap_gap bbr_fresh_40ms ;;
    # results/bench/sim_throughput.md (scripts/bench.sh)
    bench-run) bench_run ;;
    bench-plain-goal) bench_goal "$BENCH_PLAIN" 1.5 ;;
    bench-profile-goal) bench_goal "$BENCH_PROFILE" 1.2 ;;
    bench-plain-events) bench_events "$BENCH_PLAIN" ;;
    bench-profile-events) bench_events "$BENCH_PROFILE" ;;
    bench-profile-events-per-mib) bench_events_per_mib "$BENCH_PROFILE" ;;
    # results/load/live/nagle-stall.md (scripts/nagle-stall.sh)
    nagle-stall-run) nagle_run ;;
    nagle-stall-split-on) nagle_cell split 1 ;;
    nagle-stall-split-off) nagle_cell split 2 ;;
    nagle-stall-coalesced-on) nagle_cell '`--coalesce-writes`' 1 ;;
    # results/load/live/summary.csv and summary.md (scripts/load-matrix.sh)
    load-run) load_run ;;
    load-stall-p99) load_stall ;;
    load-stall-coalesced-p99) calc 'p99 %.0f ms' "$(lv p99_ms_median $TB-shared-4-nagle-on-coalesced)" ;;
    load-stall-rps) echo "$(kreq $TB-shared-4-nagle-on-split) req/s split against $(kreq $TB-shared-4-nagle-on-coalesced) coalesced" ;;
    load-split-p99-others) p99_range $TB-shared-1-nagle-on-split $TB-shared-2-nagle-on-split $TB-sharded-4-nagle-on-split ;;
    load-coalesce-nagle-off) echo "$(kreq $TB-shared-1-nagle-off-split) split against $(kreq $TB-shared-1-nagle-off-coalesced) coalesced" ;;
    load-coalesce-nagle-on) echo "$(kreq $TB-shared-1-nagle-on-split) against $(kreq $TB-shared-1-nagle-on-coalesced)" ;;
    load-nagle-on-off) echo "$(kreq $TB-shared-1-nagle-on-coalesced) req/s with Nagle on, $(kreq $TB-shared-1-nagle-off-coalesced) with nodelay" ;;
    load-io-models) echo "$(kreq $TB-shared-{1,2,4}-nagle-on-coalesced $TB-sharded-4-nagle-on-coalesced) req/s" ;;
    load-https) load_https ;;
    load-nginx-http) echo "$(kreq nginx-http-workers-{1,2,4}-nagle-on) req/s with Nagle on, $(kreq nginx-http-workers-{1,2,4}-nagle-off) with tcp_nodelay" ;;
    load-nginx-vs-1) echo "$(kreq nginx-http-workers-1-nagle-on) against $(kreq $TB-shared-1-nagle-on-split)" ;;
    load-nginx-vs-2-4) echo "$(kreq nginx-http-workers-{2,4}-nagle-on) against $(kreq $TB-shared-{2,4}-nagle-on-split)" ;;
    # results/load/simulated/sweep.csv (scripts/load-sim.sh)
    load-sim-frame-more) loadsim more ;;
    load-sim-tail) loadsim tail ;;
    load-sim-most) loadsim most ;;
    # results/sweep-example/*.csv (scripts/example-sweep.sh)
    sweep-example-points) sweep_points ;;
    *) echo "no such figure (none of that name in scripts/docs-figures.sh)" >&2; return 1 ;;
  esac
}

# The rewrite: every marker of every file, each figure generated once per run.

declare -A made failed
errors=0 stale=0
err_file=$(mktemp)
tmp=""
trap 'rm -f "$err_file" ${tmp:+"$tmp"}' EXIT

# generate NAME: sets $text (and returns 0) or prints nothing and returns 1 with $why set.
generate() {
  local name=$1
  if [[ -v "made[$name]" ]]; then text=${made[$name]}; return 0; fi
  if [[ -v "failed[$name]" ]]; then why=${failed[$name]}; return 1; fi
  # The generators print on stdout and complain on stderr; a pipeline's failure is theirs.
  # A generator that complains on stderr has failed, whatever it printed.
  if text=$(figure "$name" 2> "$err_file") && [ -n "$text" ] && [ ! -s "$err_file" ]; then
    if [[ "$text" == *$'\n'* || "$text" == *'<!--'* || "$text" == *'-->'* ]]; then
      why="the generated text spans lines or holds a comment marker"
    else
      made[$name]=$text; return 0
    fi
  else
    why=$(tr '\n' ' ' < "$err_file" | sed 's/ *$//'); [ -n "$why" ] || why="its generator printed nothing"
  fi
  failed[$name]=$why
  return 1
}

report_error() { echo "docs-figures: $*" >&2; errors=$((errors + 1)); }

for file in README.md docs/*.md; do
  [ -f "$file" ] || continue
  n=0 changed=0 broken=0
  tmp=$(mktemp "$file.docs-figures.XXXXXX")
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    rest=$line new=""
    while [[ $rest =~ \<!--\ ([a-z0-9][a-z0-9-]*)\ --\> ]]; do
      name=${BASH_REMATCH[1]} start=${BASH_REMATCH[0]} end="<!-- /${BASH_REMATCH[1]} -->"
      before=${rest%%"$start"*} after=${rest#*"$start"}
      if [[ $before =~ \<!--\ /([a-z0-9][a-z0-9-]*)\ --\> ]]; then
        report_error "$file:$n: end marker <!-- /${BASH_REMATCH[1]} --> without its start marker"; broken=1
      fi
      if [[ $after != *"$end"* ]]; then
        report_error "$file:$n: marker $name: no end marker $end on the same line"; broken=1; rest=$after; new+=$before$start; continue
      fi
      old=${after%%"$end"*} rest=${after#*"$end"}
      if generate "$name"; then
        if [ "$text" != "$old" ]; then
          changed=1 stale=$((stale + 1))
          if ((check)); then echo "$file:$n: $name: out of date; generated: $text"; fi
        fi
      else
        report_error "$file:$n: marker $name: $why"; text=$old
      fi
      new+=$before$start$text$end
    done
    if [[ $rest =~ \<!--\ /([a-z0-9][a-z0-9-]*)\ --\> ]]; then
      report_error "$file:$n: end marker <!-- /${BASH_REMATCH[1]} --> without its start marker"; broken=1
    fi
    printf '%s\n' "$new$rest" >> "$tmp"
  done < "$file"
  if ((check || !changed || broken)); then
    ((broken && changed && !check)) && echo "docs-figures: $file left as it was (its markers above are broken)" >&2
    rm -f "$tmp"
  else
    chmod --reference="$file" "$tmp" && mv "$tmp" "$file" && echo "docs-figures: rewrote $file" >&2
  fi
  tmp=""
done

if ((errors)); then
  echo "docs-figures: $errors problem(s) above; the markers concerned were left as they were" >&2
  exit 2
fi
if ((check && stale)); then
  echo "docs-figures: $stale marker(s) out of date; run: bash scripts/docs-figures.sh" >&2
  exit 1
fi
exit 0
