#!/usr/bin/python3
"""Apache TVM's MetaSchedule on the units of bench/lm_vs_search.py, each kernel written as a
TVM compute definition of the very program tlmc tunes.

For each unit (W1-W6, the unseen shapes of bench/unseen/, the heaviest subgraphs of
ResNet-50, MobileNetV2 and BERT-base: lm_vs_search.py's list, found the same way), it asks
tlmc for the unit's kernels as tensor-expression text (`tlmc --dump te-text`, the plan
lm_vs_search.py tunes, layout conversions included), translates each program stage by
stage into `te.compute` (bench/te_program.py reads the text), and lets MetaSchedule tune it
(`meta_schedule.tune_tir`, its default CPU rules, the LLVM target of this CPU with
`num-cores` = --threads): --trials per kernel on W1-W6, --trials-rest on the others. Then it
builds the best schedule, checks its outputs against a numpy evaluation of the same program
on random inputs, and times it (`time_evaluator`, the median of 10 repeats of at least
0.1 s each). The weights are arguments of the TVM function, as the program has them; TVM
does not repack them ahead of time, where tlmc may (constant weights are the compiler's to
lay out), and that is one of the things this comparison measures.

TVM runs in a virtual environment under the build folder (--venv, created and filled from
PyPI when missing: apache-tvm 0.27.0.post1 with apache-tvm-ffi 0.1.14.post1, whose later
releases crash in MetaSchedule's database, and psutil, xgboost, cloudpickle); it is never
a dependency of tlmc. The script itself runs on Debian's python3, and runs TVM's python as
a worker, one kernel at a time.

Resumable, over several sessions and machines of one kind: a kernel's tuning goes in chunks
of --chunk trials, each resuming MetaSchedule's database in --out/work/KEY. After each
chunk, the results file (--results; by default bench/results/metaschedule-MCPU.json, MCPU
the LLVM name of this CPU, committed with the repository so that a later session on a
machine of the same kind goes on from it) holds the units and, per kernel, the trials and
tuning time so far, then its best time. A kernel whose database is gone (a new machine)
while its tuning is unfinished starts again from none; an interrupted chunk is run again.
--report-only prints the table from the results; with --lm-state (lm_vs_search.py's
state.json, measured on a machine of the same kind) the table puts tlmc's -O0, lm@32 and
evo@1000 beside MetaSchedule's best.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import te_program  # noqa: E402

TVM_PACKAGES = ["numpy", "apache-tvm==0.27.0.post1", "apache-tvm-ffi==0.1.14.post1", "psutil",
                "xgboost", "cloudpickle"]


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# ---- the worker: TVM's side, run by the virtual environment's python ------------------------

def to_tvm(program):
    """The program as TVM tensors: (placeholders in input order, outputs in output order)."""
    from tvm import te
    from tvm import tirx as tir  # TVM 0.27 names its TIR module tirx

    tensors = {}
    for i in program.inputs:
        t = program.tensors[i]
        tensors[i] = te.placeholder(t.shape, t.dtype, name=f"in{len(tensors)}")

    def dtype_of(x):  # TVM 0.27's expressions say their type as `ty`
        return str(x.ty)

    def const(value, dtype):
        return tir.const(value, dtype)

    def tr(e, env):
        kind = e[0]
        if kind == "i":
            return const(e[1], "int32")
        if kind == "f":
            return const(e[2], e[1])
        if kind == "v":
            return env[e[1]]
        if kind == "l":
            return tensors[e[1]](*[tr(i, env) for i in e[2]])
        if kind == "u":
            a = tr(e[2], env)
            unary = {"neg": lambda x: -x, "exp": te.exp, "log": te.log, "sqrt": te.sqrt,
                     "tanh": te.tanh, "erf": te.erf, "sigmoid": te.sigmoid, "abs": te.abs,
                     "not": tir.Not, "floor": te.floor}
            if e[1] not in unary:
                raise te_program.TextError(f"no TVM translation of the unary operator {e[1]}")
            return unary[e[1]](a)
        if kind == "b":
            a, b = tr(e[2], env), tr(e[3], env)
            op = e[1]
            if op == "/":
                return tir.truncdiv(a, b) if "int" in dtype_of(a) else tir.Div(a, b)
            binary = {"+": tir.Add, "-": tir.Sub, "*": tir.Mul, "floordiv": tir.floordiv,
                      "floormod": tir.floormod, "min": tir.Min, "max": tir.Max,
                      "pow": te.power, "<": tir.LT, "<=": tir.LE, "==": tir.EQ, "!=": tir.NE,
                      "&&": tir.And, "||": tir.Or}
            if op not in binary:
                raise te_program.TextError(f"no TVM translation of the binary operator {op}")
            return binary[op](a, b)
        if kind == "s":
            return tir.if_then_else(tr(e[1], env), tr(e[2], env), tr(e[3], env))
        if kind == "c":
            return tir.Cast(e[1], tr(e[2], env))
        raise te_program.TextError(f"unknown expression kind {kind}")

    reducers = {"sum": te.sum, "max": te.max, "min": te.min}

    def stage_body(s, raxes, out):  # te.compute reads the arity off a function of *indices
        def fcompute(*idx):
            env = {a[0]: v for a, v in zip(s.axes, idx)}
            env.update({a[0]: r for a, r in zip(s.reduce_axes, raxes)})
            v = tr(s.body, env)
            if dtype_of(v) != out.dtype:
                v = tir.Cast(out.dtype, v)
            return reducers[s.reduce](v, axis=raxes) if raxes else v
        return fcompute

    for n, s in enumerate(program.stages):
        out = program.tensors[s.output]
        raxes = [te.reduce_axis((0, a[2]), name=f"r{a[0]}") for a in s.reduce_axes]

        tensors[s.output] = te.compute([a[2] for a in s.axes], stage_body(s, raxes, out),
                                       name=f"s{n}")
    return [tensors[i] for i in program.inputs], [tensors[o] for o in program.outputs]


def worker(job):
    """Tunes one kernel for job["trials"] more trials (0: none) and, with job["final"],
    builds, checks and times the best: prints one JSON line."""
    import numpy as np
    import tvm
    from tvm import te
    from tvm.s_tir import meta_schedule as ms
    from tvm.target import codegen

    program = te_program.parse(open(job["program"]).read())
    args_in, args_out = to_tvm(program)
    mod = tvm.IRModule({"main": te.create_prim_func(args_in + args_out)})
    target = tvm.target.Target({"kind": "llvm", "mcpu": codegen.llvm_get_system_cpu(),
                                "num-cores": job["threads"]})
    result = {"target": str(target.attrs.get("mcpu"))}
    if job["trials"] > 0:
        start = time.time()
        ms.tune_tir(mod, target, job["work_dir"], max_trials_global=job["trials"],
                    num_trials_per_iter=min(64, job["trials"]))
        result["time"] = time.time() - start
    if not job["final"]:
        print(json.dumps(result))
        return
    database = ms.database.JSONDatabase(work_dir=job["work_dir"])
    sch = ms.tir_integration.compile_tir(database, mod, target)
    if sch is None:
        raise SystemExit("metaschedule: the database holds no schedule of this kernel")
    lib = tvm.compile(sch.mod, target=target).jit()
    dev = tvm.cpu()
    inputs = te_program.random_inputs(program, seed=1)
    arrays = [tvm.runtime.tensor(a, dev) for a in inputs]
    outs = [tvm.runtime.tensor(np.zeros(program.tensors[o].shape,
                                        dtype=te_program.NUMPY_DTYPE[program.tensors[o].dtype]),
                               dev) for o in program.outputs]
    lib(*arrays, *outs)
    expected = te_program.evaluate(program, inputs)
    error = 0.0
    for got, want in zip(outs, expected):
        got = got.numpy().astype(np.float64)
        scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
        error = max(error, float(np.max(np.abs(got - want))) / scale if want.size else 0.0)
    result["error"] = error
    timer = lib.time_evaluator(lib.entry_name, dev, number=1, repeat=10, min_repeat_ms=100)
    result["seconds"] = float(np.median(timer(*arrays, *outs).results))
    result["trials"] = len(database.get_all_tuning_records())
    print(json.dumps(result))


# ---- the driver: Debian's python, tlmc and the state --------------------------------------

def tvm_python(venv):
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python):
        return python
    log(f"creating TVM's virtual environment in {venv} (pip install "
        f"{' '.join(TVM_PACKAGES)}: about 1.3 GB)")
    if subprocess.run([sys.executable, "-m", "venv", venv]).returncode != 0:
        sys.exit("metaschedule: could not create a virtual environment "
                 "(apt-get install python3-venv)")
    if subprocess.run([python, "-m", "pip", "install", "-q"] + TVM_PACKAGES,
                      stdout=sys.stderr).returncode != 0:
        import shutil
        shutil.rmtree(venv, ignore_errors=True)  # nothing half-installed is reused
        sys.exit(f"metaschedule: pip install {' '.join(TVM_PACKAGES)} failed "
                 "(PyPI unreachable?)")
    return python


def programs_of(tlmc, model, keys, out):
    """{key: path of its program text} for the unit's kernels, from tlmc's -O0 plan of the
    model without records (lm_vs_search.py's plan_keys)."""
    folder = os.path.join(out, "programs")
    os.makedirs(folder, exist_ok=True)
    paths = {k: os.path.join(folder, f"{k}.txt") for k in keys}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    empty = os.path.join(out, "no-records.db")
    cmd = [tlmc, model, "--dump", "te-text", "--tuning-db", empty, "--emit=source",
           "-o", os.path.join(out, "scratch")]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(empty + suffix):
            os.remove(empty + suffix)
    found = {}
    for key, body in te_program.split_dump(text):
        if key in paths:
            found.setdefault(key, body)
    missing = [k for k in keys if k not in found]
    if missing:
        sys.exit(f"metaschedule: tlmc's plan of {model} has no kernel {', '.join(missing)}")
    for k, body in found.items():
        with open(paths[k], "w") as f:
            f.write(body)
    return paths


def run_worker(python, job):
    r = subprocess.run([python, os.path.abspath(__file__), "--worker", json.dumps(job)],
                       capture_output=True, text=True,
                       env=dict(os.environ, TVM_NUM_THREADS=str(job["threads"])))
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-4000:])
        sys.exit(f"metaschedule: the TVM worker failed on {job['program']} (exit "
                 f"{r.returncode})")
    return json.loads(r.stdout.strip().splitlines()[-1])


def tune_kernel(python, key, path, budget, state, args, save):
    k = state["kernels"].setdefault(key, {"trials": 0, "time": 0.0})
    work = os.path.join(args.out, "work", key)
    database = os.path.join(work, "database_tuning_record.json")
    if "seconds" not in k and k["trials"] > 0 and not os.path.exists(database):
        log(f"  {key}: its {k['trials']} trials' database is not here: starting again")
        k.update(trials=0, time=0.0)
    while k["trials"] < budget:
        if args.stop_at and time.time() > args.stop_at:
            return False
        chunk = min(args.chunk, budget - k["trials"])
        log(f"  {key}: trials {k['trials']} to {k['trials'] + chunk} of {budget}")
        r = run_worker(python, {"program": path, "trials": chunk, "work_dir": work,
                                "threads": args.threads, "final": False})
        k["trials"] += chunk
        k["time"] += r["time"]
        k.pop("seconds", None)  # timed again after the last chunk
        save()
    if "seconds" not in k:
        r = run_worker(python, {"program": path, "trials": 0, "work_dir": work,
                                "threads": args.threads, "final": True})
        k.update(seconds=r["seconds"], error=r["error"], records=r["trials"], mcpu=r["target"])
        save()
        if r["error"] > 1e-3:
            log(f"  {key}: MetaSchedule's best differs from the program by {r['error']:.2e} "
                "(relative to the largest output): left out of the table")
    return True


def unit_result(state, unit):
    """(seconds of the unit: each kernel's best added up, as its plan runs them; tuning
    seconds; trials per kernel), None while a kernel is unfinished or wrong."""
    seconds, spent, trials = 0.0, 0.0, []
    for key in unit["keys"]:
        k = state["kernels"].get(key)
        if not k or "seconds" not in k or k["error"] > 1e-3:
            return None
        seconds += k["seconds"]
        trials.append(k["trials"])
    for key in set(unit["keys"]):
        spent += state["kernels"][key]["time"]
    return seconds, spent, min(trials)


def report(state, args):
    import lm_vs_search
    lm = json.load(open(args.lm_state)) if args.lm_state and os.path.exists(args.lm_state) \
        else None
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "unknown CPU")
    mcpu = next((k["mcpu"] for k in state["kernels"].values() if "mcpu" in k), "?")
    print(f"# MetaSchedule (apache-tvm 0.27, LLVM mcpu={mcpu}) on {cpu}, {args.threads} "
          f"threads; GFLOP/s of each unit's best, its tuning time in brackets")
    header = ["unit", "group", "trials", "MetaSchedule"]
    if lm:
        header += ["tlmc -O0", "tlmc lm@32", "tlmc evo@1000", "lm@32 / MetaSchedule"]
    if lm:  # lm_vs_search.best() and o0_of() read the re-timed figures from there
        lm_vs_search.RETIMED.clear()
        lm_vs_search.RETIMED.update(lm.get("retimed", {}))
    rows, ratios = [], []
    for name, u in state["units"].items():
        r = unit_result(state, u)
        if r is None:
            continue
        seconds, spent, trials = r
        cells = [name, u["group"], trials, f"{u['flops'] / seconds * 1e-9:.1f} ({spent:.0f} s)"]
        if lm:
            runs = lm["runs"].get(name, {})
            o0 = lm_vs_search.o0_of(runs["evo@1000"], name) if "evo@1000" in runs else None
            lm32 = lm_vs_search.best(runs["lm@32"], "lm@32", name) if "lm@32" in runs else None
            evo = lm_vs_search.best(runs["evo@1000"], "evo@1000", name) \
                if "evo@1000" in runs else None
            cells += [f"{u['flops'] / x * 1e-9:.1f}" if x else "-" for x in (o0, lm32, evo)]
            cells.append(f"{seconds / lm32:.2f}x" if lm32 else "-")
            if lm32:
                ratios.append(seconds / lm32)
        rows.append(cells)
    print()
    print(lm_vs_search.fmt_table(header, rows))
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"\nlm@32 / MetaSchedule over {len(ratios)} units: geomean {geo:.2f}x, "
              f"least {min(ratios):.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--tlmc", help="a tlmc to use (default: build build-bench's)")
    ap.add_argument("--out", help="state, programs and MetaSchedule's databases "
                    "(default: build-bench/metaschedule)")
    ap.add_argument("--venv", help="TVM's virtual environment (default: "
                    "build-bench/metaschedule-venv)")
    ap.add_argument("--trials", type=int, default=1000, help="trials per kernel of W1-W6")
    ap.add_argument("--trials-rest", type=int, default=64, help="trials per kernel of the rest")
    ap.add_argument("--chunk", type=int, default=200, help="trials per resumable step")
    ap.add_argument("--subgraphs", type=int, default=10,
                    help="heaviest subgraphs per model (lm_vs_search.py's, default 10)")
    ap.add_argument("--only", default="", help="comma-separated groups or unit names, as "
                    "lm_vs_search.py takes them (default: all)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--results", help="the results file (default: "
                    "bench/results/metaschedule-MCPU.json)")
    ap.add_argument("--lm-state", help="lm_vs_search.py's state.json, for tlmc's columns")
    ap.add_argument("--stop-after", type=float, default=0, help="start no chunk after this "
                    "many minutes (a session's end); what is done is kept")
    ap.add_argument("--report-only", action="store_true", help="the table from the state")
    args = ap.parse_args()
    args.stop_at = time.time() + 60 * args.stop_after if args.stop_after else 0
    if args.worker:
        worker(json.loads(args.worker))
        return
    import lm_vs_search
    import tuning_curve
    args.out = args.out or os.path.join(tuning_curve.BUILD, "metaschedule")
    args.venv = args.venv or os.path.join(tuning_curve.BUILD, "metaschedule-venv")
    os.makedirs(args.out, exist_ok=True)
    python = None if args.report_only and args.results else tvm_python(args.venv)
    if not args.results:
        mcpu = subprocess.run([python, "-c", "from tvm.target import codegen; "
                               "print(codegen.llvm_get_system_cpu())"], check=True,
                              capture_output=True, text=True).stdout.strip()
        args.results = os.path.join(ROOT, "bench", "results", f"metaschedule-{mcpu}.json")
    os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
    state = lm_vs_search.load_state(args.results)
    state.setdefault("kernels", {})
    save = lambda: lm_vs_search.save_state(args.results, state)
    if not args.report_only:
        tlmc = args.tlmc or tuning_curve.build_tlmc()
        all_units = lm_vs_search.units(tlmc, state, args.out, args.subgraphs)
        for unit in all_units.values():  # the repository's models by a path within it
            if unit["model"].startswith(ROOT + os.sep):
                unit["model"] = os.path.relpath(unit["model"], ROOT)
        save()
        exported = None
        only = [o.strip() for o in args.only.split(",") if o.strip()]
        for name, unit in all_units.items():
            if only and not any(o in (name, name.split(":")[0], unit["group"]) for o in only):
                continue
            budget = args.trials if unit["group"] == "W1-W6" else args.trials_rest
            model = os.path.join(ROOT, unit["model"])
            if not os.path.exists(model):  # a zoo model exported on another machine
                exported = exported or lm_vs_search.export_models(args.out)
                model = exported[name.split(":")[0]]
            log(f"{name}: MetaSchedule, {budget} trials per kernel")
            paths = programs_of(tlmc, model, unit["keys"], args.out)
            if not all(tune_kernel(python, key, paths[key], budget, state, args, save)
                       for key in dict.fromkeys(unit["keys"])):
                log(f"stopping: --stop-after {args.stop_after:g} minutes have passed")
                break
    report(state, args)


if __name__ == "__main__":
    main()
