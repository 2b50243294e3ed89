#!/usr/bin/env python3
"""Where the model misses on the random held-out paths: the cells of results/compare-random/seed-*/
(scripts/compare-random.sh) on valid runs, outside max(1 frame, 5 %) or not, broken down by the
server's congestion control, fresh or kept-alive connections, and random loss, with the sign of the
miss (the model slower or faster than the kernel). Prints a Markdown table per seed and for all.

Usage: python3 scripts/compare-random-breakdown.py [results/compare-random]
"""
import collections
import csv
import glob
import os
import sys


def load(seed_dir):
    points = {r["point"]: r for r in csv.DictReader(open(os.path.join(seed_dir, "points.csv")))}
    cells = []
    for r in csv.DictReader(open(os.path.join(seed_dir, "compare.csv"))):
        if r["emu_path_valid"] != "yes":
            continue
        p = points[r["point"]]
        r["cc"] = p["cc"]
        r["kind"] = "kept-alive (c3s_*)" if r["variant"].startswith("c3s") else "fresh"
        r["loss"] = "random loss" if float(p["loss"]) > 0 else "no loss"
        cells.append(r)
    return cells


def table(title, cells):
    print(f"### {title}\n")
    within = sum(c["within_time"] == "yes" for c in cells)
    borderline = sum(c["within_time"] != "yes" and c["within_frames"] == "yes" for c in cells)
    print(f"{within} of {len(cells)} valid cells within ({100 * within / max(len(cells), 1):.0f} %); "
          f"of those outside, {borderline} are one frame apart in frame counts (their medians a "
          f"frame and a few microseconds apart in time).\n")
    print("| congestion control | connection | loss | cells | outside | model slower | model faster |")
    print("|---|---|---|---:|---:|---:|---:|")
    groups = collections.defaultdict(list)
    for c in cells:
        groups[(c["cc"], c["kind"], c["loss"])].append(c)
    for key in sorted(groups):
        g = groups[key]
        out = [c for c in g if c["within_time"] != "yes"]
        slower = sum(float(c["diff_ms"]) > 0 for c in out)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {len(g)} | {len(out)} | {slower} | {len(out) - slower} |")
    print()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "results/compare-random"
    everything = []
    for seed_dir in sorted(glob.glob(os.path.join(root, "seed-*"))):
        cells = load(seed_dir)
        everything += cells
        table(os.path.basename(seed_dir), cells)
    table("all seeds", everything)


if __name__ == "__main__":
    sys.exit(main())
