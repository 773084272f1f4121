#!/usr/bin/python3
"""The language model against the evolutionary search, on workloads it never saw in training.

For each held-out unit (W1-W6, the unseen shapes S01-S22 of bench/unseen/, and the ten
subgraphs that weigh most in the latency of ResNet-50, MobileNetV2 and BERT-base at -O0:
latency x occurrences, from `tlmc --profile`), it tunes the unit's kernels alone
(`--tune-only`) from an empty tuning database:
  - with the model: `tlmc -O2 --trials N`, N in --lm (1, 10, 32 per kernel), a fresh
    database for each N;
  - with the evolutionary search as it is without a model: `tlmc -O3 --search unseeded
    --early-stopping 0 --trials B`, B in --evo (64, 256, 1000 per kernel), each budget
    resuming the one before (its time is the sum of the runs so far);
and reads back the best record of each kernel. Both measure the -O0 schedule first. lm@N is
the best of the model's N points, the -O0 point not among them; max(-O0, lm@N) is what -O2
builds (it has both), shown beside it. evo@B counts the -O0 point, where the search starts.
Where the model wrote no new point, -O2 draws one uniformly: each lm@N says how many of its
points were such (tlmc's count). The tuning time is what tlmc
reports as such for each run (proposing, compiling, running and recording candidates; not
reading the model, writing the code, or -O3's timing of its choice inside the whole model).

Then ResNet-50, MobileNetV2 and BERT-base end to end at -O1 and -O2 beside PyTorch
(bench/e2e_vs_pytorch.py, each level its own run of it, -O2 from an empty database).

Resumable: the results go to --out/state.json as each run ends; a second invocation skips
what is there (an interrupted run is run again: records count as trials, so it measures only
what is missing, but its time so far is lost). --report-only prints the tables from it.
Tables go to stdout, the curve to --out/lm_vs_search.svg, progress to stderr.
"""
import argparse
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tuning_curve  # noqa: E402  (the build, the workloads' MACs, plan keys)

ROOT = tuning_curve.ROOT
MODELS = {"resnet50": "ResNet-50", "mobilenet_v2": "MobileNetV2", "bert": "BERT-base"}
WORKLOADS = ["W1", "W2", "W3", "W4", "W5", "W6"]
UNSEEN = sorted(f[:-5] for f in os.listdir(os.path.join(ROOT, "bench", "unseen"))
                if f.endswith(".yaml"))
log = tuning_curve.log


def load_state(path):
    return json.load(open(path)) if os.path.exists(path) else {"units": {}, "runs": {}}


def save_state(path, state):
    with open(path + ".tmp", "w") as f:
        json.dump(state, f, indent=1)
    os.replace(path + ".tmp", path)


def export_models(out):
    """The zoo's exports of the three models (tests/zoo/export_models.py): {name: onnx path}."""
    models_dir = os.path.join(out, "models")
    pairs = ",".join(f"{m}:17" for m in MODELS)
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "zoo", "export_models.py"),
                    "--out", models_dir, "--exports", pairs], check=True, stdout=sys.stderr)
    manifest = json.load(open(os.path.join(models_dir, "manifest.json")))
    return {e["model"]: os.path.join(models_dir, e["onnx"]) for e in manifest["exports"]
            if e["model"] in MODELS and e["opset"] == 17}


PROFILE_ROW = re.compile(r"^\s*\d+\s+\d+\s+([0-9a-f]{16})\s+([\d.]+)\s+[\d.]+%\s+([\d.]+)\s")


def heaviest_subgraphs(tlmc, model, count, scratch):
    """The `count` kernels of `model` at -O0 with the largest share of its latency (each
    kernel's calls added up): [(key, occurrences, microseconds of all calls, flops of one)]."""
    out = subprocess.run([tlmc, model, "-O0", "--profile", "--tuning-db",
                          os.path.join(scratch, "none.db")],
                         check=True, capture_output=True, text=True).stdout
    kernels = {}
    for line in out.splitlines():
        m = PROFILE_ROW.match(line)
        if not m:
            continue
        key, us, gflops = m.group(1), float(m.group(2)), float(m.group(3))
        k = kernels.setdefault(key, [0, 0.0, gflops * 1e9 * us * 1e-6])
        k[0] += 1
        k[1] += us
    ranked = sorted(kernels.items(), key=lambda kv: -kv[1][1])[:count]
    return [(key, n, us, flops) for key, (n, us, flops) in ranked]


def unseen_units(tlmc, scratch):
    """The unseen shapes (bench/unseen/), each a unit of its -O0 plan's kernels, its flops
    those of the -O0 kernels (the profile's GFLOP/s times their time)."""
    found = {}
    for s in UNSEEN:
        model = os.path.join(ROOT, "bench", "unseen", f"{s}.yaml")
        flops = sum(n * f for _, n, _, f in heaviest_subgraphs(tlmc, model, 1000, scratch))
        found[s] = {"model": model, "group": "unseen", "weight": 1,
                    "keys": tuning_curve.plan_keys(tlmc, model, scratch), "flops": flops}
    return found


def units(tlmc, state, out, count):
    """The units, each {model file, kernels, weight, flops}; found once, kept in the state
    (the unseen shapes are added to a state written before they were units)."""
    scratch = os.path.join(out, "scratch")
    os.makedirs(scratch, exist_ok=True)
    if state["units"] and not any(u["group"] == "unseen" for u in state["units"].values()):
        state["units"].update(unseen_units(tlmc, scratch))
    if not state["units"]:
        found = {}
        for w in WORKLOADS:
            model = os.path.join(ROOT, "bench", "workloads", f"{w}.yaml")
            found[w] = {"model": model, "group": "W1-W6", "weight": 1,
                        "keys": tuning_curve.plan_keys(tlmc, model, scratch),
                        "flops": 2 * tuning_curve.MACS[w]}
        found.update(unseen_units(tlmc, scratch))
        for name, path in export_models(out).items():
            log(f"{name}: profiling at -O0 for its heaviest subgraphs")
            for key, n, us, flops in heaviest_subgraphs(tlmc, path, count, scratch):
                found[f"{name}:{key}"] = {"model": path, "group": MODELS[name], "weight": n,
                                          "keys": [key], "flops": flops, "o0_us": us / n}
        state["units"] = found
    return state["units"]


def results(db, keys, spent, uniform=0):
    """What a run leaves: the sum over `keys` of each one's fastest record timed alone (not
    in a model; None while a key has none), the same without the -O0 schedule's record (each
    key's first, which tuning measures first), the -O0 schedule's, the trials (the records
    less those first ones), the tuning time so far and the points drawn uniformly."""
    con = sqlite3.connect(db)
    try:
        upto = con.execute("SELECT MAX(rowid) FROM records").fetchone()[0] or 0
        marks = ",".join("?" * len(keys))
        n = con.execute(f"SELECT COUNT(*) FROM records WHERE workload_key IN ({marks}) AND "
                        "target NOT LIKE '% context=%'", keys).fetchone()[0]
        return {"seconds": tuning_curve.plan_seconds(con, keys, upto, alone=True),
                "without_o0": tuning_curve.plan_seconds(con, keys, upto, alone=True,
                                                        skip_first=True),
                "o0": tuning_curve.plan_seconds(con, keys, upto, first_only=True, alone=True),
                "trials": n - len(keys), "time": spent, "uniform": uniform}
    finally:
        con.close()


TUNED = re.compile(r"^tlmc: tuned \d+ subgraphs? with \d+ trials \(\d+ measured now\) in "
                   r"([\d.]+) s", re.M)
UNIFORM = re.compile(r"; (\d+) points? (?:was|were) drawn uniformly", re.M)


def tune(tlmc, unit, level, budget, db, threads, scratch, extra=()):
    """Runs tlmc at `level` on the unit's kernels alone; returns the tuning time tlmc reports
    (proposing, compiling, running and recording candidates: not reading the model, nor
    -O3's timing of the chosen candidates inside the whole model, nor writing the code) and
    the points it drew uniformly where the model wrote no new one."""
    cmd = [tlmc, unit["model"], f"-O{level}", "--tune-only", ",".join(unit["keys"]),
           "--trials", str(budget * len(unit["keys"])), "--tuning-db", db,
           "--threads", str(threads), "-j", str(threads), "--emit=source", "-o", scratch,
           *extra]
    log("+", " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        sys.exit(f"lm_vs_search: tlmc failed (exit {r.returncode})")
    m = TUNED.search(r.stdout + r.stderr)
    u = UNIFORM.search(r.stdout + r.stderr)
    # Nothing to tune: the records had it all.
    return (float(m.group(1)) if m else 0.0), (int(u.group(1)) if u else 0)


def measure_unit(tlmc, name, unit, state, args, save):
    """Fills state["runs"][name]: per method and budget, seconds of the unit, trials, time."""
    runs = state["runs"].setdefault(name, {})
    safe = name.replace(":", "-")
    dbs = os.path.join(args.out, "db")
    scratch = os.path.join(args.out, "scratch", "out")
    os.makedirs(dbs, exist_ok=True)
    model = ("--lm-model", os.path.abspath(args.lm_model)) if args.lm_model else ()
    for n in args.lm_budgets:
        tag = f"lm@{n}"
        if tag in runs:
            continue
        db = os.path.join(dbs, f"lm{n}-{safe}.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)  # a fresh database: -O2 measures only what has none
        runs[tag] = results(db, unit["keys"],
                            *tune(tlmc, unit, 2, n, db, args.threads, scratch, model))
        save()
    db = os.path.join(dbs, f"evo-{safe}.db")
    # The budgets' runs go on from each other: the time so far is the last finished one's.
    spent = max((runs[f"evo@{b}"]["time"] for b in args.evo_budgets if f"evo@{b}" in runs),
                default=0.0)
    for b in args.evo_budgets:
        tag = f"evo@{b}"
        if tag in runs:
            continue
        # Unseeded: the baseline is the search without the model, as the paper's Ansor is,
        # and its figures stay valid when the model changes. Without early stopping: B
        # trials are B trials.
        spent += tune(tlmc, unit, 3, b, db, args.threads, scratch,
                      ("--search", "unseeded", "--early-stopping", "0"))[0]
        runs[tag] = results(db, unit["keys"], spent)
        save()


def retime(tlmc, name, unit, state, args, save):
    """Times each method's winner again, the unit's kernels side by side in one process (`tlmc
    db retime`, 5 rounds, the least of each candidate's round medians): state["retimed"][name]
    holds the unit's seconds for -O0, each lm@N without the -O0 point and the longest
    evolutionary search (its database's best but -O0; -O0 counts on that side, as above).
    A method whose database misses a kernel is left out."""
    done = state.setdefault("retimed", {})
    runs = state["runs"].get(name, {})
    ms = [m for m in methods(args) if m.startswith("lm@")] + [f"evo@{max(args.evo_budgets)}"]
    if name in done or not all(m in runs for m in ms):
        return
    safe = name.replace(":", "-")
    dbs = [os.path.join(args.out, "db", f"lm{m[3:]}-{safe}.db") for m in ms[:-1]]
    dbs.append(os.path.join(args.out, "db", f"evo-{safe}.db"))
    cmd = [tlmc, "db", "retime", unit["model"], *dbs, "--only", ",".join(unit["keys"]),
           "--without-o0", "--rounds", "5", "--threads", str(args.threads)]
    log("+", " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"lm_vs_search: tlmc db retime failed (exit {r.returncode}): {r.stderr}")
    total = next(l.split("\t")[1:] for l in r.stdout.splitlines() if l.startswith("total\t"))
    seconds = [float(x) * 1e-6 if x != "-" else None for x in total]
    done[name] = {"o0": seconds[0]}
    for m, x in zip(ms, seconds[1:]):
        if x is not None:
            done[name][m] = min(x, seconds[0]) if m.startswith("evo@") else x
    save()


def methods(args):
    return [f"lm@{n}" for n in args.lm_budgets] + [f"evo@{b}" for b in args.evo_budgets]


def fmt_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] +
                     [line(r) for r in rows])


RETIMED = {}  # unit -> {method or "o0": seconds}, from the state's re-timing


def best(run, method, name=None):
    """A run's seconds, re-timed where the unit's winners were (retime()): lm@N without the
    -O0 point (a state written before that was kept has the best with it), evo@B with it."""
    again = RETIMED.get(name, {})
    if method in again:
        return again[method]
    if method.startswith("lm@") and "without_o0" in run:
        return run["without_o0"]
    return run["seconds"]


def o0_of(run, name):
    return RETIMED.get(name, {}).get("o0", run["o0"])


def report(state, args, tlmc):
    RETIMED.clear()
    RETIMED.update(state.get("retimed", {}))
    units_ = state["units"]
    ms = methods(args)
    lms = [m for m in ms if m.startswith("lm@")]
    ref = f"evo@{max(args.evo_budgets)}"
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "unknown CPU")
    target = subprocess.run([tlmc, "--print-target"], capture_output=True,
                            text=True).stdout.strip()
    print(f"# the language model (-O2, best of N measured per kernel) against the evolutionary "
          f"search (-O3, B trials per kernel); {cpu}, {args.threads} threads; {target}")
    header = ["unit", "group", "occ", "-O0"] + ms
    rows = []
    for name, u in units_.items():
        r = state["runs"].get(name, {})
        o0 = next((o0_of(r[m], name) for m in ms if m in r and r[m]["o0"]), None)
        cells = [name, u["group"], u["weight"], f"{u['flops'] / o0 * 1e-9:.1f}" if o0 else "-"]
        for m in ms:
            x = r.get(m)
            seconds = best(x, m, name) if x else None
            uniform = f", {x['uniform']} uniform" if x and x.get("uniform") else ""
            cells.append(f"{u['flops'] / seconds * 1e-9:.1f} ({x['time']:.1f} s{uniform})"
                         if seconds else "-")
        rows.append(cells)
    print("\nGFLOP/s of each unit's best records (lm@N without the -O0 point; the tuning time "
          "and the points drawn uniformly in brackets):\n")
    print(fmt_table(header, rows))

    # Weighted over a group as the paper's Table 2: the group's latency, each unit's best time
    # times its occurrences, against the reference search's; tuning time added up.
    groups = []
    for u in units_.values():
        if u["group"] not in groups:
            groups.append(u["group"])
    far = "evo 1.3x -O0"  # the units where the search found most beyond -O0

    def complete(n):
        r = state["runs"].get(n, {})
        return all(r.get(m, {}).get("seconds") and best(r[m], m, n) for m in ms) and \
            r[ref].get("o0")

    def member(g, n):
        if g == far:
            r = state["runs"][n][ref]
            return o0_of(r, n) >= 1.3 * best(r, ref, n)
        return g in ("all", units_[n]["group"])

    summary, curve = [], {}
    for g in groups + ["all", far]:
        done = [n for n in units_ if complete(n) and member(g, n)]
        names = done if g == far else [n for n in units_ if member(g, n)]
        if not done:
            continue
        runs = {n: state["runs"][n] for n in done}
        weight = {n: units_[n]["weight"] for n in done}
        ref_lat = sum(weight[n] * best(runs[n][ref], ref, n) for n in done)
        o0_lat = sum(weight[n] * o0_of(runs[n][ref], n) for n in done)
        ref_time = sum(runs[n][ref]["time"] for n in done)
        cells = [g, f"{len(done)}/{len(names)}", f"{ref_lat / o0_lat:.2f}x"]
        points = []
        for m in ms:
            lat = sum(weight[n] * best(runs[n][m], m, n) for n in done)
            t = sum(runs[n][m]["time"] for n in done)
            cells.append(f"{ref_lat / lat:.2f}x ({t / 60:.1f} min)")
            points.append((m, t, ref_lat / lat))
        for m in lms:  # what -O2 builds: the better of its points and the -O0 point
            lat = sum(weight[n] * min(best(runs[n][m], m, n), o0_of(runs[n][ref], n))
                      for n in done)
            cells.append(f"{ref_lat / lat:.2f}x")
        cells.append(" / ".join(f"{ref_time / state_time(state, done, m):.0f}x" for m in lms))
        curve[g] = points
        summary.append(cells)
    retimed = sum(1 for n in units_ if n in RETIMED)
    print(f"\nSpeed relative to {ref}, weighted (latency x occurrences; W1-W6 and the unseen "
          f"shapes once each), with the tuning time added up, and {ref}'s tuning time over the "
          f"model's; '{far}': the units where {ref} ran at least 1.3 times faster than -O0. "
          f"-O0, lm@N and {ref} re-timed side by side for {retimed} of the {len(units_)} units "
          f"(tlmc db retime); the shorter searches as they were timed:\n")
    print(fmt_table(["group", "units", "-O0"] + ms + [f"max(-O0, {m})" for m in lms] +
                    [f"{ref} time / lm time"], summary))
    plot = os.path.join(args.out, "lm_vs_search.svg")
    svg_curve(plot, curve)
    print(f"\ncurve: {plot}")
    for level in ("1", "2"):
        if f"e2e-O{level}" in state:
            print(f"\nEnd to end at -O{level} (bench/e2e_vs_pytorch.py -O {level}):\n")
            print(state[f"e2e-O{level}"])


def state_time(state, names, m):
    return sum(state["runs"][n][m]["time"] for n in names)


def svg_curve(path, curve):
    """Weighted speed relative to the reference against tuning time (log), a line per group,
    the model's points and the search's points joined separately."""
    w, h, x0, y0 = 640, 360, 60, 20
    pw, ph = w - x0 - 150, h - y0 - 50
    times = [t for pts in curve.values() for (_, t, _) in pts] or [1]
    lo, hi = math.log10(max(min(times), 1)), math.log10(max(max(times), 10))
    top = max([s for pts in curve.values() for (_, _, s) in pts] + [1.2]) * 1.05
    px = lambda t: x0 + pw * (math.log10(max(t, 1)) - lo) / max(hi - lo, 1e-9)
    py = lambda s: y0 + ph - ph * s / top
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#000000"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           'font-family="sans-serif" font-size="11">', '<rect width="100%" height="100%" '
           'fill="white"/>', f'<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" '
           'stroke="#888"/>',
           f'<line x1="{x0}" x2="{x0 + pw}" y1="{py(1):.1f}" y2="{py(1):.1f}" stroke="#bbb" '
           'stroke-dasharray="4 3"/>']
    for frac in (0, 0.5, 1):
        out.append(f'<text x="{x0 - 4}" y="{py(top * frac) + 4:.0f}" text-anchor="end">'
                   f'{top * frac:.2f}</text>')
    out.append(f'<text x="{x0}" y="{y0 + ph + 14}">{10 ** lo:.0f} s</text>')
    out.append(f'<text x="{x0 + pw}" y="{y0 + ph + 14}" text-anchor="end">{10 ** hi:.0f} s '
               'tuning time (log)</text>')
    for i, (g, pts) in enumerate(curve.items()):
        c = colours[i % len(colours)]
        for prefix, dash in (("lm@", ""), ("evo@", ' stroke-dasharray="5 3"')):
            line = [(px(t), py(s)) for (m, t, s) in pts if m.startswith(prefix)]
            d = " ".join(f"{x:.1f},{y:.1f}" for x, y in line)
            out.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="1.5"'
                       f'{dash}/>')
            out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{c}"/>' for x, y in line]
        out.append(f'<text x="{x0 + pw + 10}" y="{y0 + 14 * (i + 1)}" fill="{c}">{g}</text>')
    out.append(f'<text x="{x0}" y="{h - 8}">speed relative to the longest evolutionary search '
               '(weighted); solid: the model (best of 1, 10, 32), dashed: evolutionary</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def end_to_end(tlmc, state, args, save):
    for level in ("1", "2"):
        if f"e2e-O{level}" in state:
            continue
        db = os.path.join(args.out, f"e2e-O{level}.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)
        cmd = ["/usr/bin/python3", os.path.join(HERE, "e2e_vs_pytorch.py"), "--tlmc", tlmc,
               "-O", level, "--tuning-db", db, "--threads", str(args.threads),
               "--models", ",".join(MODELS), "--work", os.path.join(args.out, "e2e")]
        log("+", " ".join(cmd))
        r = subprocess.run(cmd, capture_output=True, text=True)
        sys.stderr.write(r.stderr)
        if r.returncode != 0:
            sys.exit(f"lm_vs_search: e2e_vs_pytorch.py -O {level} failed (exit {r.returncode})")
        state[f"e2e-O{level}"] = r.stdout.strip()
        save()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(tuning_curve.BUILD, "lm_vs_search"),
                    help="databases, state and plot (default: build-bench/lm_vs_search)")
    ap.add_argument("--lm", default="1,10,32", help="the model's budgets per kernel")
    ap.add_argument("--evo", default="64,256,1000", help="the search's budgets per kernel")
    ap.add_argument("--lm-model", help="a model file for the model's runs instead of the "
                    "bundled one (a candidate to weigh before bundling it); its results "
                    "belong in an --out of their own, with a copy of the state's evo runs")
    ap.add_argument("--subgraphs", type=int, default=10,
                    help="heaviest subgraphs per model (default 10)")
    ap.add_argument("--only", default="",
                    help="comma-separated groups or unit names: W1-W6, unseen, resnet50, "
                    "mobilenet_v2, bert, W3, S04, ... (default: all)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--no-e2e", action="store_true", help="skip the end-to-end runs")
    ap.add_argument("--report-only", action="store_true", help="tables from --out/state.json")
    args = ap.parse_args()
    args.lm_budgets = sorted(int(x) for x in args.lm.split(","))
    args.evo_budgets = sorted(int(x) for x in args.evo.split(","))
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "state.json")
    state = load_state(path)
    tlmc = tuning_curve.build_tlmc()
    save = lambda: save_state(path, state)
    if not args.report_only:
        all_units = units(tlmc, state, args.out, args.subgraphs)
        save()
        only = [o.strip() for o in args.only.split(",") if o.strip()]
        for name, unit in all_units.items():
            if only and not any(o in (name, name.split(":")[0], unit["group"]) for o in only):
                continue
            log(f"{name}: tuning")
            measure_unit(tlmc, name, unit, state, args, save)
        # Last, each unit's winners timed again side by side (the tuning runs were hours
        # apart, on a machine whose speed drifts).
        for name, unit in all_units.items():
            if only and not any(o in (name, name.split(":")[0], unit["group"]) for o in only):
                continue
            retime(tlmc, name, unit, state, args, save)
        if not args.no_e2e:
            end_to_end(tlmc, state, args, save)
    report(state, args, tlmc)


if __name__ == "__main__":
    main()
