#!/usr/bin/env python3
"""A run on a link that changes over time, as a game developer looks at it: the link's rate over
time (a delivery trace, per 100 ms) above each variant's requests, one row per variant, each
request a bar from its start to its completion, the simulation's and the kernel's side by side.

Reads the trace (Mahimahi's format) and the results.json of each twin's runs (their samples'
started_ms, docs/scenarios.md): one --pair per run, the simulated one first; writes OUT.png and
OUT.svg with gnuplot (Debian's gnuplot-nox).

Usage: python3 scripts/plot-trace-timeline.py TRACE OUT --pair SIM.json EMULATED.json [--pair ...]
                                              [--title TEXT]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

OPPORTUNITY_BYTES = 1504  # Mahimahi's PACKET_SIZE


def trace_rates(path, window_ms=100):
    times = [int(line) for line in open(path) if line.strip()]
    # An opportunity stamped t ms delivers in the ms ending at t: window (t - 1) // window_ms.
    counts = collections.Counter(max(t - 1, 0) // window_ms for t in times)
    period = times[-1]
    return [(w * window_ms / 1000, counts.get(w, 0) * OPPORTUNITY_BYTES * 8 / (window_ms * 1e3))
            for w in range(-(-period // window_ms))], period


def requests(path):
    samples = json.load(open(path)).get("samples", [])
    return [(s["variant"], s.get("startedMs", s.get("started_ms", 0.0)), s.get("elapsedMs", s.get("elapsed_ms", 0.0)),
             s.get("warmup", False)) for s in samples]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("out")
    parser.add_argument("--pair", nargs=2, action="append", required=True,
                        metavar=("SIM", "EMULATED"), help="one run's results.json of each twin")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    rates, period = trace_rates(args.trace)
    twins = {"simulated": [], "kernel": []}
    for sim, emulated in args.pair:
        twins["simulated"] += requests(sim)
        twins["kernel"] += requests(emulated)
    variants = []
    for reqs in twins.values():
        for variant, *_ in reqs:
            if variant not in variants:
                variants.append(variant)
    end_s = max((start + elapsed) / 1000 for reqs in twins.values() for _, start, elapsed, _ in reqs)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "rate.dat"), "w") as f:
            # The trace loops: repeat it over the run.
            loops = int(end_s * 1000 // period) + 1
            for loop in range(loops):
                for t, mbps in rates:
                    f.write(f"{t + loop * period / 1000:.3f} {mbps:.3f}\n")
        for twin, offset in (("simulated", -0.15), ("kernel", 0.15)):
            with open(os.path.join(tmp, f"{twin}.dat"), "w") as f:
                for variant, start, elapsed, warmup in twins[twin]:
                    row = variants.index(variant) + offset
                    f.write(f"{start / 1000:.4f} {row:.2f} {elapsed / 1000:.4f} 0\n")
        script = f"""
set terminal pngcairo noenhanced size 1200,{300 + 40 * len(variants)} font ",10"
set output "{args.out}.png"
call "{tmp}/body.gp"
set terminal svg noenhanced size 1200,{300 + 40 * len(variants)} font ",10"
set output "{args.out}.svg"
call "{tmp}/body.gp"
"""
        body = f"""
reset
set multiplot layout 2,1 title "{args.title}"
set lmargin 12
set xrange [0:{end_s:.3f}]
set ylabel "Mbit/s (per 100 ms)"
set format x ""
set grid
set key top left
plot "{tmp}/rate.dat" using 1:2 with steps lw 1.5 lc rgb "#444444" title "the trace's rate"
set format x "%g"
set xlabel "time from the run's start (s)"
set ylabel ""
set ytics ({", ".join(f'"{v}" {i}' for i, v in enumerate(variants))})
set yrange [-0.7:{len(variants) - 0.3}]
set key below horizontal
plot "{tmp}/simulated.dat" using 1:2:3:4 with vectors nohead lw 6 lc rgb "#1f77b4" title "simulated (ns-3)", \\
     "{tmp}/kernel.dat" using 1:2:3:4 with vectors nohead lw 6 lc rgb "#ff7f0e" title "kernel (emulated path)"
unset multiplot
"""
        open(os.path.join(tmp, "body.gp"), "w").write(body)
        open(os.path.join(tmp, "plot.gp"), "w").write(script)
        subprocess.run(["gnuplot", os.path.join(tmp, "plot.gp")], check=True)


if __name__ == "__main__":
    sys.exit(main())
