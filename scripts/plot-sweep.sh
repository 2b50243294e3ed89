#!/usr/bin/env bash
# Plots of a sweep's sweep.csv with gnuplot (Debian's gnuplot-nox): each plot as PNG and SVG.
#
#   plot-sweep.sh speedup  CSV OUT FAST SLOW BODY  FAST's speedup over SLOW (ratio of medians) at
#                                                  body size BODY, as heatmaps over rtt_ms x rate_mbps,
#                                                  one per fps
#   plot-sweep.sh latency  CSV OUT RATE            median vs rtt_ms per variant, ping (body 0) at
#                                                  rate_mbps RATE, one panel per fps
#   plot-sweep.sh size     CSV OUT                 median vs body_bytes per variant with the
#                                                  chunk x fps ceiling, one panel per chunk_bytes x fps
#   plot-sweep.sh clients  CSV OUT                 median and p99 frames vs clients per variant,
#                                                  one panel per body size (a simulated load)
#
# OUT is a path without extension: OUT.png and OUT.svg are written. Columns are found by name.
set -euo pipefail

usage() { sed -n '2,14p' "$0" >&2; exit 2; }
(($# >= 3)) || usage
kind=$1 csv=$2 out=$3
shift 3
[ -r "$csv" ] || { echo "plot-sweep: cannot read $csv" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Runs an awk program body on the CSV's rows (the last argument; earlier ones are awk options). The
# body is the function row(), which reads fields by column name: col("median_ms").
awk_csv() {
  local body=${!#}
  awk -F, -v OFS='\t' "${@:1:$#-1}" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    function col(name) { if (!(name in c)) { print "plot-sweep: no column " name > "/dev/stderr"; exit 3 } return $(c[name]) }
    { row() }
    function row() '"$body" "$csv"
}

# Renders the gnuplot program $1 (panels of width x height pixels) to OUT.png and OUT.svg. Every
# plotted series has a title of its own: the SVG names an untitled one by its data file, a
# temporary path, and the file would differ run to run.
render() {
  local program=$1 width=$2 height=$3
  gnuplot <<EOF
set terminal pngcairo size $width,$height font "sans,10" noenhanced
set output "$out.png"
$program
EOF
  gnuplot <<EOF
set terminal svg size $width,$height font "sans,10" background "white" noenhanced
set output "$out.svg"
$program
EOF
}

# 1048576 -> "1 MiB"
human_bytes() {
  awk -v b="$1" 'BEGIN { split("B KiB MiB GiB", u, " "); i = 1
    while (b >= 1024 && b % 1024 == 0 && i < 4) { b /= 1024; i++ }; printf "%g %s", b, u[i] }'
}

# Distinct values of a column in file order, then numerically sorted (space separated).
distinct() { cut -f"$1" "$2" | sort -g -u | tr '\n' ' '; }

case $kind in
speedup)
  (($# == 3)) || usage
  fast=$1 slow=$2 body=$3
  # fps rtt rate median, for the two variants at the body size
  awk_csv -v fast="$fast" -v slow="$slow" -v body="$body" '{
    if (col("body_bytes") != body || col("median_ms") == "") return
    if (col("variant") == fast) f[col("fps") SUBSEP col("rtt_ms") SUBSEP col("rate_mbps")] = col("median_ms")
    if (col("variant") == slow) s[col("fps") SUBSEP col("rtt_ms") SUBSEP col("rate_mbps")] = col("median_ms")
  } END { for (k in f) if (k in s) { split(k, p, SUBSEP); print p[1], p[2], p[3], s[k] / f[k] } }' >"$tmp/ratio"
  [ -s "$tmp/ratio" ] || { echo "plot-sweep: no $fast/$slow pairs at body_bytes $body" >&2; exit 1; }
  fpss=$(distinct 1 "$tmp/ratio") rtts=$(distinct 2 "$tmp/ratio") rates=$(distinct 3 "$tmp/ratio")
  # Grid indices, so that uneven axis values get even cells; tics name the values.
  awk -v rtts="$rtts" -v rates="$rates" 'BEGIN { n = split(rtts, r, " "); for (i = 1; i <= n; i++) xi[r[i]] = i - 1
      m = split(rates, q, " "); for (i = 1; i <= m; i++) yi[q[i]] = i - 1 }
    { print $1, xi[$2], yi[$3], $4 }' "$tmp/ratio" | sort -k1,1g -k3,3g -k2,2g |
    awk '{ print > ("'"$tmp"'/fps" $1) }'
  # A log colour scale centred on 1 (white): blue where FAST wins, red where it loses.
  span=$(awk '{ r = $4 < 1 ? 1 / $4 : $4; if (r > m) m = r } END { print (m > 1.01 ? m : 1.01) }' "$tmp/ratio")
  xtics=$(i=0; for v in $rtts; do printf '"%g" %d,' "$v" $((i++)); done)
  ytics=$(i=0; for v in $rates; do printf '"%g" %d,' "$v" $((i++)); done)
  n=$(wc -w <<<"$fpss") cols=$(( n < 2 ? n : 2 )) rows=$(( (n + 1) / 2 ))
  program="set multiplot layout $rows,$cols title \"Speedup of $fast over $slow (ratio of median times), body $body B\"
set xtics (${xtics%,})
set ytics (${ytics%,})
set xlabel 'RTT (ms)'; set ylabel 'downlink (Mbit/s)'
set logscale cb; set cbrange [1.0/$span:$span]
set cbtics (sprintf('%.2gx', 1.0/$span) 1.0/$span, '1x' 1, sprintf('%.2gx', $span) $span)
set palette defined (0 '#b2182b', 0.5 'white', 0.75 '#6baed6', 1 '#08306b')
unset key; set tics out
"
  for f in $fpss; do
    program+="set title '$( [ "$f" = 0 ] && echo uncapped || echo "$f fps" )'
plot '$tmp/fps$f' using 2:3:4 with image title 'speedup', '' using 2:3:(sprintf('%.1f', \$4)) with labels font ',7' notitle
"
  done
  render "$program" 1200 $((450 * rows))
  ;;
latency)
  (($# == 1)) || usage
  rate=$1
  awk_csv -v rate="$rate" '{
    if (col("body_bytes") != 0 || col("rate_mbps") != rate || col("median_ms") == "") return
    print col("fps"), col("variant"), col("rtt_ms"), col("median_ms"), col("q1_ms"), col("q3_ms")
  }' >"$tmp/rows"
  [ -s "$tmp/rows" ] || { echo "plot-sweep: no ping rows at rate_mbps $rate" >&2; exit 1; }
  fpss=$(distinct 1 "$tmp/rows") variants=$(cut -f2 "$tmp/rows" | awk '!seen[$0]++' | tr '\n' ' ')
  awk -F'\t' '{ print $3, $4, $5, $6 > ("'"$tmp"'/" $1 "-" $2) }' "$tmp/rows"
  n=$(wc -w <<<"$fpss") cols=$(( n < 2 ? n : 2 )) rows=$(( (n + 1) / 2 ))
  program="set multiplot layout $rows,$cols title 'Ping latency vs RTT per variant (median, bars: quartiles), downlink $rate Mbit/s'
set xlabel 'RTT (ms)'; set ylabel 'median time (ms)'; set key top left; set grid
"
  for f in $fpss; do
    program+="set title '$( [ "$f" = 0 ] && echo uncapped || echo "$f fps" )'
plot for [v in '$variants'] '$tmp/$f-'.v using 1:2:3:4 with yerrorlines title v
"
  done
  render "$program" 1200 $((400 * rows))
  ;;
size)
  (($# == 0)) || usage
  awk_csv '{
    if (col("median_ms") == "") return
    print col("chunk_bytes"), col("fps"), col("variant"), col("body_bytes"), col("median_ms")
  }' >"$tmp/rows"
  [ -s "$tmp/rows" ] || { echo "plot-sweep: no rows" >&2; exit 1; }
  chunks=$(distinct 1 "$tmp/rows") fpss=$(distinct 2 "$tmp/rows")
  variants=$(cut -f3 "$tmp/rows" | awk '!seen[$0]++' | tr '\n' ' ')
  awk -F'\t' '{ print $4, $5 > ("'"$tmp"'/" $1 "-" $2 "-" $3) }' "$tmp/rows"
  rows=$(wc -w <<<"$chunks") cols=$(wc -w <<<"$fpss")
  xtics=$(for b in $(distinct 4 "$tmp/rows"); do printf '"%s" %s,' "$(human_bytes "$b")" "$b"; done)
  program="set multiplot layout $rows,$cols title 'Download time vs body size; dashed: one chunk per frame, size / (chunk x fps)'
set logscale xy; set grid; set key top left
set xlabel 'body'; set ylabel 'median time (ms)'
set xtics (${xtics%,}) rotate by -45
"
  for c in $chunks; do
    for f in $fpss; do
      program+="set title 'chunk $(human_bytes "$c"), $f fps'
plot for [v in '$variants'] '$tmp/$c-$f-'.v using 1:2 with linespoints title v, \
     x / ($c * $f) * 1000 with lines dashtype 2 lc 'black' title 'ceiling'
"
    done
  done
  render "$program" $((500 * cols)) $((380 * rows))
  ;;
clients)
  (($# == 0)) || usage
  awk_csv '{
    if (col("median_frames") == "") return
    print col("body_bytes"), col("variant"), col("clients"), col("median_frames"), col("p99_frames")
  }' >"$tmp/rows"
  [ -s "$tmp/rows" ] || { echo "plot-sweep: no rows" >&2; exit 1; }
  bodies=$(distinct 1 "$tmp/rows") variants=$(cut -f2 "$tmp/rows" | awk '!seen[$0]++' | tr '\n' ' ')
  awk -F'\t' '{ print $3, $4, $5 > ("'"$tmp"'/" $1 "-" $2) }' "$tmp/rows"
  n=$(wc -w <<<"$bodies") cols=$(( n < 2 ? n : 2 )) rows=$(( (n + 1) / 2 ))
  program="set multiplot layout $rows,$cols title 'Frames per request vs clients sharing the path (solid: median, dashed: p99)'
set logscale x 2; set grid; set key top left; set yrange [0:*]
set xlabel 'clients'; set ylabel 'frames'
"
  for b in $bodies; do
    program+="set title '$( [ "$b" = 0 ] && echo ping || human_bytes "$b" )'
plot for [i=1:words('$variants')] '$tmp/$b-'.word('$variants', i) using 1:2 with linespoints lc i title word('$variants', i).' median', \\
     for [i=1:words('$variants')] '$tmp/$b-'.word('$variants', i) using 1:3 with linespoints dashtype 2 lc i title word('$variants', i).' p99'
"
  done
  render "$program" 1200 $((420 * rows))
  ;;
*) usage ;;
esac
echo "plot-sweep: wrote $out.png $out.svg" >&2
