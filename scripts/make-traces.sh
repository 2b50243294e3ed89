#!/usr/bin/env bash
# Regenerates data/traces/: delivery traces in Mahimahi's format (docs/scenarios.md, "Links that
# change over time") of the shapes a mobile path takes, each from `twinbench trace` with a fixed
# seed, so the files are the same on any machine. Quick (well under a second).
#
#   bash scripts/make-traces.sh
set -euo pipefail
cd "$(dirname "$0")/.."
twinbench=${TWINBENCH:-build/default/twinbench}
[ -x "$twinbench" ] || { echo "make-traces: no $twinbench; build first or set TWINBENCH" >&2; exit 2; }
out=data/traces
mkdir -p "$out"
# A constant 12.032 Mbit/s (one opportunity a ms): the equal of downlink_mbps: 12.032.
"$twinbench" trace steps --mbps 12.032 --step-ms 1000 --duration-ms 1000 -o "$out/constant-12mbit.trace"
# Steps: 20, 5, then 50 Mbit/s, two seconds each (a cell edge, a congested cell, a good one).
"$twinbench" trace steps --mbps 20,5,50 --step-ms 2000 --duration-ms 6000 -o "$out/steps-20-5-50mbit.trace"
# A random walk between 2 and 40 Mbit/s with a 300 ms outage (no deliveries) every 5 s on average.
"$twinbench" trace walk --min-mbps 2 --max-mbps 40 --step-mbps 4 --outage-every-ms 5000 \
  --outage-ms 300 --seed 1 --duration-ms 20000 -o "$out/walk-2-40mbit-outages.trace"
# A periodic fade: 30 Mbit/s down to 2 and back every 4 s (walking away from the access point).
"$twinbench" trace fade --min-mbps 2 --max-mbps 30 --period-ms 4000 --duration-ms 8000 \
  -o "$out/fade-30-2mbit.trace"
