#!/usr/bin/python3
"""-O1 (the language model's likeliest schedules, nothing measured) against -O0 (the rule),
each model whole, timed by `tlmc --profile` in interleaved rounds: the target "-O1 slower than
-O0 on no unit" in one table.

    /usr/bin/python3 bench/o1_vs_o0.py [--models bench/unseen/*.yaml] [--lm-model A.tlm ...]
                                       [--verifier default|none|V.tsm ...]
                                       [--rounds 5] [--tlmc PATH]

For each model (default: the unseen shapes, bench/unseen/), each variant (-O0; -O1 with the
bundled language model and with each --lm-model, each of them with each --verifier: the
speedup model that checks -O1's drafts, "default" the bundled one, "none" no check; default:
both) is profiled once a round, the variants in turn and
starting at another each round, from an empty tuning database; a variant's time is the least
of its rounds' medians (`one run: ... us (median of N runs)`). A variant whose generated
source is byte for byte -O0's (the draft check kept every -O0 schedule) is the same program:
its cell says "= -O0", and it counts as 1.00 whatever its timing noise. The table gives each model's
times and each -O1's ratio to -O0 (above 1: slower than the rule; "slower" in the summary
means by more than 3%), then the geometric means. tlmc as bench/tuning_curve.py builds it
unless --tlmc names one. Progress goes to stderr.
"""
import argparse
import glob
import hashlib
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tuning_curve  # noqa: E402  (the build)

ONE_RUN = re.compile(r"^one run: ([\d.]+) us", re.M)


def profile(tlmc, model, variant, scratch):
    """Microseconds of one run of `model` built as `variant` (["-O0"], or ["-O1", ...])."""
    db = os.path.join(scratch, "none.db")
    r = subprocess.run([tlmc, model, *variant, "--profile", "--tuning-db", db],
                       capture_output=True, text=True)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    m = ONE_RUN.search(r.stdout)
    if r.returncode != 0 or not m:
        sys.exit(f"o1_vs_o0: tlmc {' '.join(variant)} --profile {model} failed: {r.stderr}")
    return float(m.group(1))


def source_digest(tlmc, model, variant, scratch):
    """A digest of the C source `variant` generates for `model`."""
    out = os.path.join(scratch, "source")
    db = os.path.join(scratch, "none.db")
    r = subprocess.run([tlmc, model, *variant, "--emit", "source", "-o", out, "--tuning-db", db],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"o1_vs_o0: tlmc {' '.join(variant)} --emit source {model} failed: {r.stderr}")
    h = hashlib.sha256()
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read())
        os.remove(os.path.join(out, name))
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+",
                    default=sorted(glob.glob(os.path.join(tuning_curve.ROOT, "bench", "unseen",
                                                          "*.yaml"))))
    ap.add_argument("--lm-model", nargs="*", default=[], help="model files beside the bundled")
    ap.add_argument("--verifier", nargs="+", default=["default", "none"],
                    help="-O1's draft checks: default (the bundled), none, or model files")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tlmc", help="a tlmc to run (default: build it as tuning_curve.py does)")
    args = ap.parse_args()
    tlmc = args.tlmc or tuning_curve.build_tlmc()
    variants = [("-O0", ["-O0"])]
    for lm in [None] + args.lm_model:
        for v in args.verifier:
            name, flags = "-O1", ["-O1"]
            if lm:
                name += f" {os.path.basename(lm)}"
                flags += ["--lm-model", os.path.abspath(lm)]
            if v != "default":
                name += f" verifier {os.path.basename(v)}"
                flags += ["--verifier", v if v == "none" else os.path.abspath(v)]
            variants.append((name, flags))
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "unknown CPU")
    rows, logs = [], {name: [] for name, _ in variants[1:]}
    same = {name: 0 for name, _ in variants[1:]}
    with tempfile.TemporaryDirectory() as scratch:
        for model in args.models:
            best = {name: math.inf for name, _ in variants}
            for r in range(args.rounds):
                for i in range(len(variants)):
                    name, flags = variants[(i + r) % len(variants)]
                    best[name] = min(best[name], profile(tlmc, model, flags, scratch))
            o0 = best["-O0"]
            digests = {name: source_digest(tlmc, model, flags, scratch) for name, flags in variants}
            cells = [os.path.basename(model), f"{o0:.1f}"]
            for name, _ in variants[1:]:
                if digests[name] == digests["-O0"]:
                    cells.append(f"{best[name]:.1f} (= -O0)")
                    logs[name].append(0.0)
                    same[name] += 1
                    continue
                cells.append(f"{best[name]:.1f} ({best[name] / o0:.2f})")
                logs[name].append(math.log(best[name] / o0))
            print(" ".join(cells), file=sys.stderr)
            rows.append(cells)
    print(f"# -O1 against -O0, whole models, least of {args.rounds} interleaved rounds' medians "
          f"(tlmc --profile); {cpu}")
    header = ["model", "-O0 us"] + [f"{name} us (/ -O0)" for name, _ in variants[1:]]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for cells in rows:
        print("| " + " | ".join(cells) + " |")
    for name, values in logs.items():
        slower = sum(1 for v in values if v > math.log(1.03))
        print(f"{name}: geometric mean {math.exp(sum(values) / len(values)):.2f} of -O0's time; "
              f"slower than -O0 by more than 3% on {slower} of {len(values)}; the same program "
              f"as -O0 on {same[name]}")


if __name__ == "__main__":
    main()
