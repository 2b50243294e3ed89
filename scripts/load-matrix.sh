#!/usr/bin/env bash
# Regenerates results/load/live/: the live load matrix (docs/load.md). twinbench serve over HTTP and
# HTTPS x shared 1/2/4 threads and sharded 4 x Nagle on/off x split/coalesced writes, and nginx
# (Debian's nginx-light with libnginx-mod-http-echo, 1/2/4 workers) serving POST /echo beside it;
# each cell 3 repetitions of 16 clients x window 16 x a 1024-byte POST, warmup 0.25 s, 1 s
# measured. nginx is skipped, and the script says so, when it or its echo module is missing.
#
#   bash scripts/load-matrix.sh [--note TEXT] [--quick]
#
# --note is recorded with every cell (e.g. "other work running"); --quick runs 1 repetition of
# 0.2 s per cell into out/load-matrix instead (a smoke test of the script, not results).
set -euo pipefail
cd "$(dirname "$0")/.."

note=""
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --note) note="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "usage: $0 [--note TEXT] [--quick]" >&2; exit 2 ;;
  esac
done

twinbench=build/default/twinbench
[ -x "$twinbench" ] || { echo "build first: cmake --preset default && cmake --build --preset default" >&2; exit 2; }
out=results/load/live
repeat=3 duration=1 warmup=0.25
if [ "$quick" = 1 ]; then out=out/load-matrix repeat=1 duration=0.2 warmup=0.05; fi
work=$(mktemp -d)
nginx_pid=""
cleanup() {
  if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
rm -rf "$out/cells"
mkdir -p "$out/cells"

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
machine="$cpu, $(nproc) cores, preset default (RelWithDebInfo)"
common=(--clients 16 --window 16 --payload 1024 --warmup "$warmup" --duration "$duration"
        --repeat "$repeat" --note "$note")

cell() {  # NAME ARGS...: one cell into $out/cells/NAME
  local name=$1; shift
  echo "== $name" >&2
  "$twinbench" load "${common[@]}" --label "$name" --out "$out/cells/$name" "$@" >/dev/null
}

for proto in http https; do
  tls=(); [ "$proto" = https ] && tls=(--tls)
  for nagle in on off; do
    nodelay=(); [ "$nagle" = off ] && nodelay=(--nodelay)
    for model in shared-1 shared-2 shared-4 sharded-4; do
      for writes in split coalesced; do
        coalesce=(); [ "$writes" = coalesced ] && coalesce=(--coalesce-writes)
        cell "twinbench-$proto-$model-nagle-$nagle-$writes" "${tls[@]}" "${nodelay[@]}" \
          "${coalesce[@]}" --io-model "${model%-*}" --threads "${model#*-}"
      done
    done
  done
done

# nginx: a generated config on 127.0.0.1, started per cell (its 3 repetitions share it).
echo_module=/usr/lib/nginx/modules/ngx_http_echo_module.so
nginx_skipped=""
if ! command -v nginx >/dev/null; then
  nginx_skipped="nginx is not installed (Debian: nginx-light)"
elif [ ! -f "$echo_module" ]; then
  nginx_skipped="nginx's echo module is missing (Debian: libnginx-mod-http-echo)"
fi

start_nginx() {  # WORKERS PROTO NAGLE -> sets nginx_pid, nginx_url
  local workers=$1 proto=$2 nagle=$3 port ssl="" nodelay=off
  port=$((20000 + RANDOM % 20000))
  [ "$proto" = https ] && ssl=" ssl"
  [ "$nagle" = off ] && nodelay=on
  mkdir -p "$work/nginx"
  cat > "$work/nginx/nginx.conf" <<CONF
load_module $echo_module;
worker_processes $workers;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  client_body_buffer_size 64k;
  tcp_nodelay $nodelay;
  ssl_protocols TLSv1.2 TLSv1.3;
  server {
    listen 127.0.0.1:$port$ssl;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    location = /echo { echo_read_request_body; echo_request_body; }
    location = /api/benchmark/ping/ { default_type application/json; return 200 '{"ok": true}'; }
  }
}
CONF
  nginx -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" &
  nginx_pid=$!
  nginx_url="$proto://127.0.0.1:$port"
  for _ in $(seq 100); do  # at most 5 s
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "nginx did not start on port $port:" >&2; cat "$work/nginx/error.log" >&2; exit 1
}

if [ -z "$nginx_skipped" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
  for proto in http https; do
    ca=(); [ "$proto" = https ] && ca=(--tls-ca "$work/cert.pem")
    for nagle in on off; do
      nodelay=(); [ "$nagle" = off ] && nodelay=(--nodelay)
      for workers in 1 2 4; do
        start_nginx "$workers" "$proto" "$nagle"
        cell "nginx-$proto-workers-$workers-nagle-$nagle" --server "$nginx_url" \
          --server-nagle "$nagle" "${ca[@]}" "${nodelay[@]}"
        kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=""
      done
    done
  done
else
  echo "nginx skipped: $nginx_skipped" >&2
fi

# One table: the cells' summary rows under one header, and a Markdown digest of it.
first=$(ls "$out"/cells/*/summary.csv | head -1)
{ head -1 "$first"; for f in "$out"/cells/*/summary.csv; do tail -n +2 "$f"; done; } > "$out/summary.csv.tmp"
mv "$out/summary.csv.tmp" "$out/summary.csv"
{
  echo "# Live load matrix"
  echo
  echo "Generated by \`bash scripts/load-matrix.sh\` on $(date -u +%Y-%m-%d); see docs/load.md for how to read it."
  echo "Machine: $machine.${note:+ Note: $note.}"
  echo "Each cell: 16 keep-alive connections x 16 pipelined requests, POST /echo of 1024 bytes,"
  echo "warmup $warmup s, $duration s measured, $repeat repetitions (twinbench serve: a fresh"
  echo "process each; nginx: one process per cell). Figures are medians [min-max] over repetitions."
  [ -n "$nginx_skipped" ] && { echo; echo "nginx skipped: $nginx_skipped."; }
  echo
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
                     print "| cell | req/s | p50 ms | p99 ms | p99.9 ms | max ms | errors |"
                     print "|---|---:|---:|---:|---:|---:|---:|"; next }
    { printf "| %s | %.0f [%.0f-%.0f] | %.2f [%.2f-%.2f] | %.2f [%.2f-%.2f] | %.2f | %.2f | %d |\n",
        $c["label"], $c["rps_median"], $c["rps_min"], $c["rps_max"],
        $c["p50_ms_median"], $c["p50_ms_min"], $c["p50_ms_max"],
        $c["p99_ms_median"], $c["p99_ms_min"], $c["p99_ms_max"],
        $c["p999_ms_median"], $c["max_ms_median"], $c["errors_max"] }' "$out/summary.csv"
} > "$out/summary.md.tmp"
mv "$out/summary.md.tmp" "$out/summary.md"
echo "wrote $out/summary.csv and $out/summary.md" >&2
