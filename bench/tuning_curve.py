#!/usr/bin/env python3
"""Tuning curves of tlmc -O3 on the workloads W1-W6 (bench/README.md), or U1-U7 (--only).

For each workload and search strategy (evolutionary, random), tlmc -O3 tunes the workload
from an empty tuning database up to each budget in --trials (a run resumes from the records
of the one before, so a budget's wall-clock time is the sum of the runs up to it); after
each, the records give the latency of the faster activation-layout plan (its kernels' best
records added up, conversions included) and so the GFLOP/s (2*MACs / latency, bias and
Relu not counted). Then bench_kernels builds the libraries from the evolutionary search's records and
times them beside oneDNN and OpenBLAS, with the machine's FMA peak, in one run.

Prints two tables to stdout and writes the curves as an SVG plot (--out). Progress goes to
stderr. A benchmark, not a test: see bench/README.md.
"""
import argparse
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The build folder (bench/run.sh's); TLMC_BENCH_BUILD names another, an existing build say.
BUILD = os.environ.get("TLMC_BENCH_BUILD", os.path.join(ROOT, "build-bench"))
# Multiply-adds of each workload (bench/README.md).
MACS = {
    "W1": 1024 * 1024 * 1024,
    "W2": 128 * 768 * 3072,
    "W3": 64 * 64 * 9 * 56 * 56,
    "W4": 256 * 64 * 56 * 56,
    "W5": 12 * 128 * 64 * 128,
    "W6": 144 * 9 * 56 * 56,
    # Shapes outside W1-W6 (bench/README.md).
    "U1": 256 * 256 * 9 * 14 * 14,
    "U2": 128 * 128 * 9 * 28 * 28,
    "U3": 512 * 2048 * 7 * 7,
    "U4": 96 * 9 * 56 * 56,
    "U5": 144 * 24 * 56 * 56,
    "U6": 128 * 768 * 768,
    "U7": 12 * 128 * 128 * 64,
}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def run(cmd, **kw):
    log("+", " ".join(cmd))
    return subprocess.run(cmd, check=True, **kw)


def build_tlmc():
    if os.path.exists(os.path.join(BUILD, "CMakeCache.txt")):
        run(["cmake", "-B", BUILD, "-DTLMC_BUILD_BENCH=ON"], stdout=sys.stderr)
    else:
        run(["cmake", "-S", ROOT, "-B", BUILD, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
             "-DTLMC_BUILD_BENCH=ON", "-DBUILD_TESTING=OFF"], stdout=sys.stderr)
    run(["ninja", "-C", BUILD, "-j", os.environ.get("TLMC_BENCH_JOBS", "1"), "tlmc"],
        stdout=sys.stderr)
    return os.path.join(BUILD, "driver", "tlmc")


def plan_keys(tlmc, model, out_dir, layout=None):
    """The workload keys of the kernels tlmc builds for `model` in an activation layout
    ("model", "channels-last"; None: what -O0 chooses without records), from --dump te. Each
    kernel of these one-operator workloads runs once (a conversion included)."""
    empty = os.path.join(out_dir, "no-records.db")
    cmd = [tlmc, model, "--dump", "te", "--tuning-db", empty, "--emit=source",
           "-o", os.path.join(out_dir, "scratch")]
    if layout:
        cmd += ["--activation-layout", layout]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(empty + suffix):
            os.remove(empty + suffix)
    return [line.split("(workload ")[1].rstrip(")") for line in out.splitlines()
            if line.startswith("# kernel ") and "(workload " in line]


def plan_seconds(con, keys, upto, first_only=False, alone=False, skip_first=False):
    """The latency of a plan by the records with rowid <= upto: the sum over its kernels of
    the best successful record (first_only: the first record, the -O0 baseline; skip_first:
    the best but the first); None while a kernel has none. alone: only records of kernels
    timed alone, not those -O3 timed inside the model (their descriptor ends
    " context=model")."""
    where = " AND target NOT LIKE '% context=%'" if alone else ""
    total = 0.0
    for key in keys:
        if skip_first:
            first = con.execute("SELECT MIN(rowid) FROM records WHERE workload_key = ? AND "
                                "rowid <= ?" + where, (key, upto)).fetchone()[0]
            seconds = con.execute("SELECT MIN(seconds) FROM records WHERE workload_key = ? AND "
                                  "status = 'ok' AND rowid <= ? AND rowid > ?" + where,
                                  (key, upto, first or 0)).fetchone()[0]
        elif first_only:
            row = con.execute("SELECT seconds, status FROM records WHERE workload_key = ? AND "
                              "rowid <= ?" + where + " ORDER BY rowid LIMIT 1",
                              (key, upto)).fetchone()
            seconds = row[0] if row and row[1] == "ok" else None
        else:
            seconds = con.execute("SELECT MIN(seconds) FROM records WHERE workload_key = ? AND "
                                  "status = 'ok' AND rowid <= ?" + where,
                                  (key, upto)).fetchone()[0]
        if seconds is None:
            return None
        total += seconds
    return total


def curve_points(tlmc, workload, db, checkpoints, out_dir):
    """[(budget, trials done, GFLOP/s, cumulative seconds)] and the -O0 GFLOP/s, from the
    records: after each budget, the best of the activation-layout plans (the model's, and
    channels-last with its conversions: what -O3 builds), each the sum of its kernels'
    best records. Trials are the records but each kernel's first, the -O0 baseline that
    -O3 measures before any candidate."""
    model = os.path.join(ROOT, "bench", "workloads", f"{workload}.yaml")
    plans = {tuple(plan_keys(tlmc, model, out_dir, layout))
             for layout in ("model", "channels-last")}
    o0 = plan_keys(tlmc, model, out_dir)
    con = sqlite3.connect(db)
    try:
        points = []
        for budget, upto, spent in checkpoints:
            latencies = [t for t in (plan_seconds(con, keys, upto) for keys in plans) if t]
            rows, kernels = con.execute("SELECT COUNT(*), COUNT(DISTINCT workload_key) FROM "
                                        "records WHERE rowid <= ?", (upto,)).fetchone()
            gflops = 2 * MACS[workload] / min(latencies) * 1e-9 if latencies else 0.0
            points.append((budget, rows - kernels, gflops, spent))
        base = plan_seconds(con, o0, checkpoints[-1][1], first_only=True) if checkpoints else None
    finally:
        con.close()
    return points, 2 * MACS[workload] / base * 1e-9 if base else None


def tune_curve(tlmc, workload, search, budgets, out_dir, threads):
    """[(budget, the records' last rowid, cumulative seconds)] after tuning the workload up
    to each budget."""
    db = os.path.join(out_dir, f"{search}-{workload}.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    model = os.path.join(ROOT, "bench", "workloads", f"{workload}.yaml")
    scratch = os.path.join(out_dir, "scratch")
    checkpoints, spent = [], 0.0
    for budget in budgets:
        start = time.monotonic()
        run([tlmc, model, "-O3", "--trials", str(budget), "--search", search, "--tuning-db", db,
             "--threads", str(threads), "-j", str(threads), "--emit=source", "-o", scratch],
            stdout=sys.stderr, stderr=sys.stderr)
        spent += time.monotonic() - start
        con = sqlite3.connect(db)
        try:
            upto = con.execute("SELECT MAX(rowid) FROM records").fetchone()[0] or 0
        finally:
            con.close()
        checkpoints.append((budget, upto, spent))
        log(f"{workload} {search}: budget {budget}, {upto} records, {spent:.0f} s")
    return checkpoints


def merge(tlmc, dbs, merged):
    if os.path.exists(merged):
        os.remove(merged)
    files = []
    for db in dbs:
        jsonl = db + ".jsonl"
        run([tlmc, "db", "export", "--tuning-db", db, "-o", jsonl], stdout=sys.stderr)
        files.append(jsonl)
    run([tlmc, "db", "import", *files, "--tuning-db", merged], stdout=sys.stderr)


def svg_plot(path, curves, workloads, searches, peers):
    """Best GFLOP/s against trials (log scale), a panel per workload; oneDNN dashed."""
    colours = {"evolutionary": "#1f77b4", "random": "#d62728"}
    pw, ph, cols = 300, 220, 3
    rows = (len(workloads) + cols - 1) // cols
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{pw * cols}" height="{ph * rows + 30}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="100%" height="100%" fill="white"/>']
    for i, w in enumerate(workloads):
        x0, y0 = (i % cols) * pw + 45, (i // cols) * ph + 30
        width, height = pw - 60, ph - 60
        series = [curves[(w, s)] for s in searches if (w, s) in curves]
        top = max([g for pts, _ in series for (_, _, g, _) in pts] + list(peers.get(w, ())) + [1])
        top *= 1.1
        max_t = max([t for pts, _ in series for (_, t, _, _) in pts] + [2])

        def px(t):
            return x0 + width * math.log(max(t, 1)) / math.log(max_t)

        def py(g):
            return y0 + height - height * g / top
        out.append(f'<rect x="{x0}" y="{y0}" width="{width}" height="{height}" fill="none" '
                   'stroke="#888"/>')
        out.append(f'<text x="{x0 + width / 2}" y="{y0 - 6}" text-anchor="middle">{w}</text>')
        for frac in (0, 0.5, 1):
            g = top * frac
            out.append(f'<text x="{x0 - 4}" y="{py(g) + 4:.0f}" text-anchor="end">{g:.0f}</text>')
        out.append(f'<text x="{x0}" y="{y0 + height + 14}">1</text>')
        out.append(f'<text x="{x0 + width}" y="{y0 + height + 14}" text-anchor="end">'
                   f'{max_t} trials</text>')
        for peer, colour in zip(peers.get(w, ()), ("#2ca02c", "#999999")):
            out.append(f'<line x1="{x0}" x2="{x0 + width}" y1="{py(peer):.1f}" '
                       f'y2="{py(peer):.1f}" stroke="{colour}" stroke-dasharray="4 3"/>')
        for s in searches:
            if (w, s) not in curves:
                continue
            pts, base = curves[(w, s)]
            line = [(1, base)] if base else []
            line += [(t, g) for (_, t, g, _) in pts]
            d = " ".join(f"{px(t):.1f},{py(g):.1f}" for t, g in line)
            out.append(f'<polyline points="{d}" fill="none" stroke="{colours.get(s, "#000")}" '
                       'stroke-width="1.5"/>')
    legend = " ".join(f'<tspan fill="{colours.get(s, "#000")}">{s}</tspan>' for s in searches)
    out.append(f'<text x="10" y="{ph * rows + 20}">best GFLOP/s after N trials: {legend} '
               '(dashed, same run: <tspan fill="#2ca02c">oneDNN, model layout</tspan>, '
               '<tspan fill="#999999">oneDNN, own layouts</tspan>)</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", default="64,256,1000", help="budgets, ascending (64,256,1000)")
    ap.add_argument("--search", default="evolutionary,random", help="strategies to compare")
    ap.add_argument("--only", default="W1,W2,W3,W4,W5,W6", help="workloads (W1..W6, U1..U7)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="threads (all cores)")
    ap.add_argument("--out", default=os.path.join(BUILD, "tuning"), help="databases and plot")
    ap.add_argument("--no-peers", action="store_true", help="skip the oneDNN/OpenBLAS run")
    ap.add_argument("--report-only", action="store_true",
                    help="no tuning: the tables from the databases and checkpoints in --out")
    a = ap.parse_args()
    budgets = sorted(int(t) for t in a.trials.split(","))
    searches = a.search.split(",")
    workloads = [w.strip().upper() for w in a.only.split(",")]
    os.makedirs(a.out, exist_ok=True)
    tlmc = build_tlmc()

    # Each workload's checkpoints (budget, last record, seconds) are kept beside the
    # databases, so that --report-only prints the tables again without tuning.
    saved = os.path.join(a.out, "checkpoints.json")
    checkpoints = json.load(open(saved)) if os.path.exists(saved) else {}
    for w in workloads:
        for s in searches:
            if not a.report_only:
                checkpoints[f"{s}-{w}"] = tune_curve(tlmc, w, s, budgets, a.out, a.threads)
                with open(saved, "w") as f:
                    json.dump(checkpoints, f, indent=1)
    curves = {}
    for w in workloads:
        for s in searches:
            if f"{s}-{w}" in checkpoints:
                curves[(w, s)] = curve_points(tlmc, w, os.path.join(a.out, f"{s}-{w}.db"),
                                              checkpoints[f"{s}-{w}"], a.out)

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "unknown CPU")
    print(f"tlmc -O3 tuning curves, float32, {a.threads} threads, {cpu}")
    print(f"target: {subprocess.run([tlmc, '--print-target'], capture_output=True, text=True).stdout.strip()}")
    header = ["workload", "search", "-O0"] + [f"{b} trials" for b in budgets]
    rows = [header]
    for w in workloads:
        for s in searches:
            if (w, s) not in curves:
                continue
            pts, base = curves[(w, s)]
            rows.append([w, s, f"{base:.1f}" if base else "-"] +
                        [f"{g:.1f} ({t:.0f} s, {n})" for (_, n, g, t) in pts])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        print("  ".join(c.rjust(wd) for c, wd in zip(r, widths)))
    print("\nbest GFLOP/s after each budget (2*MACs / the latency of the faster activation-layout "
          "plan, each\nthe sum of its kernels' best records: a channels-last convolution pays its "
          "conversions), with\nthe wall-clock tuning time so far and the trials spent (fewer than "
          "the budget when every task\nstopped early); -O0 is the fixed schedule in -O0's layout, "
          "measured by the same run.")

    peers = {}
    results = os.path.join(a.out, "peers.tsv")  # --report-only plots the last run's
    if not a.no_peers and not a.report_only and "evolutionary" in searches:
        merged = os.path.join(a.out, "evolutionary.db")
        merge(tlmc, [os.path.join(a.out, f"evolutionary-{w}.db") for w in workloads], merged)
        shutil.rmtree(os.path.join(BUILD, "bench", "generated"), ignore_errors=True)
        run(["cmake", "-B", BUILD, f"-DTLMC_BENCH_OPT=-O0;--tuning-db;{merged}"],
            stdout=sys.stderr)
        run(["ninja", "-C", BUILD, "-j", "1", "bench_kernels"], stdout=sys.stderr)
        print(f"\nThe tuned kernels (best evolutionary records) beside oneDNN and OpenBLAS:\n",
              flush=True)
        result = subprocess.run([os.path.join(BUILD, "bench", "bench_kernels"), "--threads",
                                 str(a.threads), "--only", ",".join(workloads),
                                 "--results", results], capture_output=True, text=True)
        print(result.stdout, flush=True)
        if result.returncode != 0 or not os.path.exists(results):
            log(result.stderr)
            sys.exit(f"bench_kernels failed (exit {result.returncode})")
        # Back to the plain -O0 libraries for bench/run.sh.
        run(["cmake", "-B", BUILD, "-DTLMC_BENCH_OPT=-O0"], stdout=sys.stderr)
        shutil.rmtree(os.path.join(BUILD, "bench", "generated"), ignore_errors=True)
    if not a.no_peers and os.path.exists(results):
        for line in open(results):
            cells = line.rstrip("\n").split("\t")
            if cells[0] in MACS:
                # oneDNN GFLOP/s with the model's layout, and in its own layouts.
                peers[cells[0]] = (float(cells[2]), float(cells[4]))
    plot = os.path.join(a.out, "tuning_curves.svg")
    svg_plot(plot, curves, workloads, searches, peers)
    print(f"plot: {plot}")


if __name__ == "__main__":
    main()
