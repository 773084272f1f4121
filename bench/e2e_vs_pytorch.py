#!/usr/bin/python3
"""End-to-end latency of whole models: a tlmc library beside PyTorch and the PyPI peers.

    /usr/bin/python3 bench/e2e_vs_pytorch.py [--tlmc build-bench/driver/tlmc] [--threads N]
        [--models resnet50,mobilenet_v2,bert,gpt2] [--opset 17] [--work build-bench/e2e]
        [--runs 30] [--rounds 3] [--max-time 20] [--target host] [-O 0|3]
        [--tuning-db FILE] [--tlmc-args "--activation-layout channels-last ..."]
        [--peers ort,ov-f32,ov,torch-eager,torch-compile | none] [--peers-venv DIR]

Run it with Debian's python3 (python3-torch, python3-torchvision, python3-onnx). For each
model (bench/README.md's end-to-end list: batch 1, images 224x224, 128 tokens) it

1. exports the model to ONNX with random weights, or reuses the export: the exporter and
   the models are the model-zoo test's (tests/zoo/export_models.py), written into
   WORK/models and kept there while the script and torch stay the same;
2. compiles it with the `tlmc` executable: `tlmc MODEL.onnx --emit=source -O LEVEL --name
   NAME --target TARGET [--tuning-db FILE]`, then the C into a shared library with the flags
   tlmc itself gives the C compiler (toolchain/cc.cc) plus -fPIC, so that Python can load
   it with ctypes. With -O 3, tlmc tunes (or resumes tuning) into the tuning database, and
   the `build` column's tlmc time is the tuning time; a database that already holds the
   model's records is used as is (no measurement, tlmc's time is then its compile time);
3. times NAME_run through ctypes on the zoo's random inputs, with NAME_set_num_threads(N),
   in a process of its own (bench/peer_server.py --kind tlmc, run by this Python: in this
   process, the threads PyTorch's BLAS keeps competed with the library's), PyTorch eager (model(*inputs) under torch.inference_mode) and TorchScript (the model
   traced, frozen and passed through torch.jit.optimize_for_inference, which moves
   convolutions to oneDNN's blocked layouts), with torch.set_num_threads(N), N the same for
   all (--threads, default: all online cores). OMP_WAIT_POLICY is PASSIVE unless already
   set, so that PyTorch's idle OpenMP threads do not spin against the other sides;
   and the PyPI peers, each in a process of its own run by the Python of a virtual
   environment under the build folder (--peers-venv, default build-bench/peers, created and
   filled by pip on first use: numpy, onnx, onnxruntime, openvino, torch, torchvision; never
   a dependency of tlmc), timed by bench/peer_server.py in the same alternating rounds:
   ONNX Runtime on the same ONNX file (every graph optimisation), OpenVINO on it (CPU,
   latency hint) with INFERENCE_PRECISION_HINT f32 and at its default precision (bf16 on
   CPUs with AVX512_BF16 or AMX; the table says which each ran in), and torch 2.x eager and
   torch.compile on the zoo's model with the exported weights;
4. measures the machine's float32 FMA peak on the same threads (bench/fma_peak.cc, built
   with the system C++ compiler into WORK) and prints it in the header;
5. prints a table: model | tlmc ms | each peer's ms | ratio (the fastest float32 peer's time
   / tlmc time: above 1, tlmc is faster; a bf16 column is shown, not counted) | spread |
   runs | max abs difference of each side's outputs from PyTorch 1.13 eager (a sanity
   check, not a test) | build times.

Timing, as bench/kernels_vs_onednn.cc does it: a warm-up of at least 2 runs and 0.2 s per
side, then --rounds rounds in which tlmc and PyTorch alternate, each doing --runs/--rounds
timed runs (fewer when a side has spent --max-time/--rounds seconds in the round), with a
0.1 s pause between sides so that the other side's spinning threads go to sleep. The figure
is the median of all timed runs; `spread` is the slowest round's median over the fastest's,
the larger of the two sides'. The machines are shared and noisy: the ratio from one run is
worth more than the absolute times.

PyTorch's Linear and MatMul go to the system BLAS (Debian builds torch with BLAS_INFO
generic; convolutions go to oneDNN). The header names the library loaded: Debian's netlib
reference BLAS (libblas3, the default when no other provides libblas.so.3) is unoptimised and
single-threaded and makes BERT and GPT-2 in PyTorch many times slower than they would be
with OpenBLAS (libopenblas0-pthread); the table says so rather than hiding it.
OPENBLAS_NUM_THREADS is set to --threads unless already set.

Until tlmc supports every operator a model uses, that model's row says why it failed and
the exit status is 1; the other rows are still measured.
"""

import argparse
import contextlib
import ctypes
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "zoo"))
# torch and the zoo (which imports torch) are imported by main(), after the arguments: the
# BLAS library reads its thread count from the environment when torch loads it.
torch = zoo = None

DEFAULT_MODELS = ("resnet50", "mobilenet_v2", "bert", "gpt2")

# The PyPI peers (bench/peer_server.py), in table order, and their column names.
PEER_KINDS = ("ort", "ov-f32", "ov", "torch-eager", "torch-compile")
PEER_COLUMNS = {"ort": "ONNX Runtime", "ov-f32": "OpenVINO f32 hint", "ov": "OpenVINO default",
                "torch-eager": "torch 2 eager", "torch-compile": "torch 2 compile"}
# What the peers' environment holds; never a dependency of tlmc.
PEER_PACKAGES = ["numpy", "onnx", "onnxruntime", "openvino", "torch", "torchvision"]


def peers_venv(path):
    """The Python of the peers' virtual environment, created and filled when missing."""
    python = os.path.join(path, "bin", "python")
    if not os.path.exists(python):
        print(f"creating the peers' virtual environment in {path} (pip install "
              f"{' '.join(PEER_PACKAGES)}: torch brings CUDA libraries, about 6 GB)",
              file=sys.stderr, flush=True)
        r = subprocess.run([sys.executable, "-m", "venv", path])
        if r.returncode != 0:
            sys.exit("e2e_vs_pytorch: could not create a virtual environment (apt-get install "
                     "python3-venv), or pass --peers none")
        r = subprocess.run([python, "-m", "pip", "install", "-q"] + PEER_PACKAGES,
                           stdout=sys.stderr)
        if r.returncode != 0:
            shutil.rmtree(path, ignore_errors=True)  # nothing half-installed is reused
            sys.exit(f"e2e_vs_pytorch: pip install {' '.join(PEER_PACKAGES)} failed "
                     "(PyPI unreachable?); pass --peers none to time without them")
    return python

# tlmc's flags for the C compiler: toolchain/cc.cc (compile_objects) and ir/target.cc
# (Target::cc_flags), by the target named on the first line of the generated C.
CC_COMMON = ["-std=c11", "-O3", "-fno-math-errno", "-ffp-contract=fast"]
CC_TARGET = {
    "x86-64": ["-march=x86-64"],
    "x86-64-avx2": ["-march=haswell"],
    "x86-64-avx512": ["-march=skylake-avx512", "-mprefer-vector-width=512"],
}
def c_compiler():
    """$CC, else the Clang that tlmc's own libraries are compiled with (its -O2 and -O3
    time candidates as Clang compiles them; docs/driver.md, --emit source), else cc."""
    if os.environ.get("CC"):
        return os.environ["CC"]
    for cc in ("clang-14", "clang"):
        if shutil.which(cc):
            return cc
    return "cc"


NP_DTYPE = {"float32": np.float32, "int64": np.int64}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


class TlmcModel:
    """A model compiled by tlmc into a shared library. It is loaded and timed by
    bench/peer_server.py (--kind tlmc) in a process of its own, run by this Python: in this
    process, the threads PyTorch's BLAS starts competed with the library's (BERT-base 121.7
    ms here against 111.7 ms with OPENBLAS_NUM_THREADS=1)."""

    def __init__(self, tlmc, onnx_path, name, target, work, opt, tuning_db, extra):
        self.name = name
        src = os.path.join(work, name)
        t0 = time.monotonic()
        run([tlmc, onnx_path, "--emit=source", f"-O{opt}", "--name", name, "--target", target,
             "-o", src] + (["--tuning-db", tuning_db] if tuning_db else []) + extra)
        self.tlmc_seconds = time.monotonic() - t0
        with open(os.path.join(src, name + ".c")) as f:
            first = f.readline()
        m = re.search(r"for target ([^ .]+)", first)
        if not m or m.group(1) not in CC_TARGET:
            raise RuntimeError(f"cannot tell the target from {name}.c: {first.strip()}")
        self.target = m.group(1)
        self.library = os.path.join(src, f"lib{name}.so")
        cc = c_compiler()
        t0 = time.monotonic()
        run([cc] + CC_COMMON + CC_TARGET[self.target] + [
            "-fPIC", "-shared", f"{name}.c", f"{name}_runtime.c", f"{name}_weights.S",
            "-o", self.library, "-lpthread", "-lm"], cwd=src)  # the .S embeds the .bin by a
        self.cc_seconds = time.monotonic() - t0                 # relative path


class TlmcLibrary:
    """A tlmc library loaded with ctypes: NAME_run on bound inputs and outputs, with
    NAME_set_num_threads (bench/peer_server.py --kind tlmc)."""

    def __init__(self, so, name, inputs, outputs, threads):
        self.name = name
        lib = ctypes.CDLL(so)
        self._run = getattr(lib, name + "_run")
        self._run.restype = ctypes.c_int
        self._run.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p),
                              ctypes.c_void_p]
        workspace_size = getattr(lib, name + "_workspace_size")
        workspace_size.restype = ctypes.c_size_t
        set_threads = getattr(lib, name + "_set_num_threads")
        set_threads.argtypes = [ctypes.c_int]
        set_threads.restype = None
        set_threads(threads)
        n = workspace_size()
        self._ws_buffer = np.empty(n + 64, dtype=np.uint8)  # NAME_run wants 64-byte alignment
        self._ws = self._ws_buffer.ctypes.data + (-self._ws_buffer.ctypes.data) % 64
        self.outputs = outputs
        self._keep = (inputs, outputs)
        self._in = (ctypes.c_void_p * len(inputs))(*[a.ctypes.data for a in inputs])
        self._out = (ctypes.c_void_p * len(outputs))(*[a.ctypes.data for a in outputs])

    def __call__(self):
        rc = self._run(self._in, self._out, ctypes.c_void_p(self._ws))
        if rc != 0:
            raise RuntimeError(f"{self.name}_run returned {rc}")
        return self.outputs


def run(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout.strip()}")
    return r.stdout


def short_error(text):
    """One line for the table: the operators tlmc lacks, or the first error line."""
    ops = re.findall(r"^\s*operator (\S+)", text, re.M)
    if ops:
        return "tlmc does not support " + ", ".join(ops)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return next((ln for ln in lines if "error" in ln), lines[-1] if lines else "?")[:120]


def blas_libraries():
    """The BLAS and LAPACK libraries this process has loaded (PyTorch's, after a matmul)."""
    a = torch.ones(8, 8)
    torch.mm(a, a)
    found = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if re.search(r"blas|lapack|mkl", os.path.basename(path)):
                found.add(os.path.realpath(path))
    return sorted(found)


def blas_note(libs):
    """One line about PyTorch's BLAS: Debian's netlib reference BLAS is unoptimised."""
    if not libs:
        return "PyTorch BLAS: none loaded (matrix products in PyTorch's own kernels)"
    text = "PyTorch BLAS: " + ", ".join(libs)
    if any("/blas/libblas.so" in p for p in libs):
        text += (" -- the netlib REFERENCE BLAS: PyTorch's Linear and MatMul run unoptimised "
                 "and single-threaded (install libopenblas0-pthread for a fair peer)")
    return text


def warm_up(fn, min_runs=2, min_seconds=0.2):
    t0 = time.perf_counter()
    runs = 0
    while runs < min_runs or time.perf_counter() - t0 < min_seconds:
        fn()
        runs += 1


def timed(fn, runs, max_seconds):
    """Up to `runs` timed runs, fewer when they take more than `max_seconds` (at least 1)."""
    times = []
    start = time.perf_counter()
    while len(times) < runs and (not times or time.perf_counter() - start < max_seconds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


class LocalSide:
    """A side timed in this process."""

    def __init__(self, fn):
        self.fn = fn

    def warm(self):
        warm_up(self.fn)

    def time(self, runs, max_seconds):
        return timed(self.fn, runs, max_seconds)


class PeerSide:
    """A side timed by bench/peer_server.py in the peers' virtual environment."""

    def __init__(self, python, kind, model, onnx_path, input_files, threads, state_dict,
                 extra=()):
        cmd = [python, os.path.join(REPO, "bench", "peer_server.py"), "--kind", kind,
               "--model", model, "--onnx", onnx_path, "--inputs", ",".join(input_files),
               "--threads", str(threads)] + (["--state-dict", state_dict] if state_dict else [])
        cmd += list(extra)
        env = dict(os.environ)
        env.pop("OMP_NUM_THREADS", None)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=env)
        ready = self._reply()
        self.label, self.precision = ready["label"], ready["precision"]

    def _reply(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the peer exited {self.proc.wait()} without a reply")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply

    def _ask(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def warm(self):
        self._ask("warm")

    def time(self, runs, max_seconds):
        return self._ask(f"time {runs} {max_seconds}")["times"]

    def outputs(self, path):
        self._ask(f"outputs {path}")
        with np.load(path) as f:
            return [f[f"arr_{i}"] for i in range(len(f.files))]

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def measure(sides, runs, rounds, max_seconds):
    """Median seconds per side over all rounds, the larger round spread, and the number of
    timed runs per side."""
    per_round = max(1, runs // rounds)
    for side in sides:
        side.warm()
        time.sleep(0.1)
    all_times = [[] for _ in sides]
    round_medians = [[] for _ in sides]
    for _ in range(rounds):
        for i, side in enumerate(sides):
            t = side.time(per_round, max_seconds / rounds)
            all_times[i] += t
            round_medians[i].append(statistics.median(t))
            time.sleep(0.1)
    medians = [statistics.median(t) for t in all_times]
    spread = max(max(r) / min(r) for r in round_medians)
    return medians, spread, [len(t) for t in all_times]


def fma_peak(work, threads):
    """The machine's float32 FMA peak on `threads` threads, measured now (bench/fma_peak.cc,
    built here with the system C++ compiler): (GFLOP/s, ISA), or None when it cannot be."""
    exe = os.path.join(work, "fma_peak")
    sources = [os.path.join(REPO, "bench", f) for f in ("fma_peak.cc", "fma_peak_main.cc")]
    try:
        os.makedirs(work, exist_ok=True)
        # -O3, as the kernel benchmark's Release build: at -O2 GCC keeps the accumulator
        # array in memory and measures half the peak.
        run([os.environ.get("CXX", "c++"), "-O3", "-std=c++17", "-pthread"] + sources +
            ["-o", exe])
        gflops, isa = run([exe, str(threads)]).split()
        return float(gflops), isa
    except (RuntimeError, OSError, ValueError) as e:
        print(f"fma peak: {e}", file=sys.stderr, flush=True)
        return None


def bench_model(name, entry, models_dir, args):
    tlmc = TlmcModel(args.tlmc, os.path.join(models_dir, entry["onnx"]), "e2e_" + name,
                     args.target, args.work, args.opt, args.tuning_db, args.tlmc_args.split())
    inputs = [np.fromfile(os.path.join(models_dir, t["file"]), dtype=NP_DTYPE[t["dtype"]])
              .reshape(t["shape"]) for t in entry["inputs"]]

    model, torch_inputs, _ = zoo.build(name)  # the same model and inputs as the export
    for a, b in zip(inputs, torch_inputs):
        assert np.array_equal(a, b.numpy()), f"{name}: saved inputs differ from the model's"

    model.eval()

    def torch_run():
        with torch.inference_mode():
            return model(*torch_inputs)

    with torch.no_grad():
        script = torch.jit.optimize_for_inference(
            torch.jit.freeze(torch.jit.trace(model, tuple(torch_inputs))))

    def script_run():
        with torch.inference_mode():
            return script(*torch_inputs)

    want = torch_run()
    want = (want,) if isinstance(want, torch.Tensor) else want
    got = script_run()
    got = (got,) if isinstance(got, torch.Tensor) else got
    script_diff = max(float((g - w).abs().max()) for g, w in zip(got, want))

    # The PyPI peers, each in a process of the peers' environment, on the same ONNX file,
    # inputs and (for torch 2.x) weights.
    peer_dir = os.path.join(args.work, "peers", name)
    os.makedirs(peer_dir, exist_ok=True)
    input_files = []
    for i, a in enumerate(inputs):
        input_files.append(os.path.join(peer_dir, f"input{i}.npy"))
        np.save(input_files[-1], a)
    state_dict = os.path.join(peer_dir, "state_dict.pt")
    torch.save(model.state_dict(), state_dict)
    # tlmc's library in a process of its own, run by this Python (numpy and ctypes only).
    outputs_spec = ",".join("x".join(map(str, t["shape"])) + ":" + t["dtype"]
                            for t in entry["outputs"])
    tlmc_side = PeerSide(sys.executable, "tlmc", name, os.path.join(models_dir, entry["onnx"]),
                         input_files, args.threads, "",
                         ["--library", tlmc.library, "--name", tlmc.name,
                          "--outputs", outputs_spec])
    try:
        got = tlmc_side.outputs(os.path.join(peer_dir, "tlmc.npz"))
        diff = max(float(np.abs(g - w.numpy()).max()) for g, w in zip(got, want))
    except Exception:
        tlmc_side.close()
        raise
    peers, peer_results = [], {}
    for kind in args.peer_kinds:
        print(f"{name}: starting {kind}", file=sys.stderr, flush=True)
        try:
            side = PeerSide(args.peer_python, kind, name,
                            os.path.join(models_dir, entry["onnx"]), input_files, args.threads,
                            state_dict if kind.startswith("torch") else "")
            got = side.outputs(os.path.join(peer_dir, kind + ".npz"))
            side.warm()  # torch.compile compiles here, outside the timed rounds
        except Exception as e:  # a peer that cannot run this model leaves its cell empty
            print(f"{name}: {kind}: {e}", file=sys.stderr, flush=True)
            peer_results[kind] = {"error": short_error(str(e))}
            continue
        peers.append((kind, side))
        peer_results[kind] = {
            "label": side.label, "precision": side.precision,
            "diff": max(float(np.abs(g - w.numpy()).max()) for g, w in zip(got, want))}
    try:
        sides = [tlmc_side, LocalSide(torch_run), LocalSide(script_run)]
        medians, spread, counts = measure(sides + [s for _, s in peers], args.runs,
                                          args.rounds, args.max_time)
    finally:
        tlmc_side.close()
        for _, side in peers:
            side.close()
    tlmc_s, torch_s, script_s = medians[:3]
    for (kind, _), m in zip(peers, medians[3:]):
        peer_results[kind]["ms"] = m * 1e3
    return {"tlmc_ms": tlmc_s * 1e3, "torch_ms": torch_s * 1e3, "script_ms": script_s * 1e3,
            "script_diff": script_diff, "spread": spread, "peers": peer_results,
            "diff": diff, "target": tlmc.target, "runs": "/".join(map(str, counts)),
            "build": f"tlmc {tlmc.tlmc_seconds:.1f} s + cc {tlmc.cc_seconds:.1f} s"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tlmc", default=os.path.join(REPO, "build-bench", "driver", "tlmc"),
                    help="the tlmc executable (default: build-bench/driver/tlmc)")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help="comma-separated zoo models (default: %(default)s)")
    ap.add_argument("--opset", type=int, default=17, choices=(13, 17))
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="threads for both tlmc and PyTorch (default: all online cores)")
    ap.add_argument("--runs", type=int, default=30, help="timed runs per side (default 30)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    ap.add_argument("--max-time", type=float, default=20.0,
                    help="seconds of timed runs per side and model, at most (default 20): "
                    "a slow side gets fewer runs")
    ap.add_argument("--target", default="host", help="tlmc --target (default: host)")
    ap.add_argument("-O", dest="opt", type=int, default=0, choices=(0, 1, 2, 3),
                    help="tlmc's optimisation level (default 0; 3 tunes on this machine)")
    ap.add_argument("--tuning-db", default="",
                    help="tlmc --tuning-db (default: tlmc's own default)")
    ap.add_argument("--tlmc-args", default="",
                    help="more options for tlmc, space-separated (--activation-layout ...)")
    ap.add_argument("--work", default=os.path.join(REPO, "build-bench", "e2e"),
                    help="folder for the exports and the libraries (default: build-bench/e2e)")
    ap.add_argument("--peers", default=",".join(PEER_KINDS),
                    help="PyPI peers, comma-separated, or 'none' (default: %(default)s)")
    ap.add_argument("--peers-venv", default=os.path.join(REPO, "build-bench", "peers"),
                    help="their virtual environment, created and filled with pip when missing "
                    "(default: build-bench/peers)")
    args = ap.parse_args()
    args.peer_kinds = [] if args.peers == "none" else [
        k.strip() for k in args.peers.split(",") if k.strip()]
    for k in args.peer_kinds:
        if k not in PEER_KINDS:
            sys.exit(f"e2e_vs_pytorch: unknown peer '{k}' (known: {', '.join(PEER_KINDS)})")
    if args.peer_kinds:
        args.peer_python = peers_venv(args.peers_venv)
    if not os.access(args.tlmc, os.X_OK):
        sys.exit(f"e2e_vs_pytorch: no tlmc at {args.tlmc}: build it (cmake -S . -B build-bench "
                 "-G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF && ninja -C "
                 "build-bench tlmc) or pass --tlmc")
    if args.threads < 1:
        sys.exit("e2e_vs_pytorch: --threads must be at least 1")
    # OpenBLAS, if that is the BLAS PyTorch loads, takes its thread count from here; the
    # OpenMP runtime its wait policy (read when torch loads it).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    global torch, zoo
    import torch
    import export_models as zoo
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    libs = blas_libraries()
    for m in models:
        if m not in zoo.MODELS:
            sys.exit(f"e2e_vs_pytorch: unknown model '{m}' (known: {', '.join(zoo.MODELS)})")

    models_dir = os.path.join(args.work, "models")
    print(f"exporting (or reusing) the models in {models_dir}", file=sys.stderr, flush=True)
    with contextlib.redirect_stdout(sys.stderr):
        manifest = zoo.export(models_dir, [(m, args.opset) for m in models])
    entries = {(e["model"], e["opset"]): e for e in manifest["exports"]}
    torch.set_num_threads(args.threads)

    rows = []
    failed = False
    for name in models:
        print(f"{name}: compiling and timing", file=sys.stderr, flush=True)
        try:
            rows.append((name, bench_model(name, entries[(name, args.opset)], models_dir, args)))
        except Exception as e:  # one model's failure still leaves the others' rows
            failed = True
            print(f"{name}: {e}", file=sys.stderr, flush=True)
            rows.append((name, {"error": short_error(str(e))}))

    peak = fma_peak(args.work, args.threads)
    targets = sorted({r["target"] for _, r in rows if "target" in r})
    load = os.getloadavg()
    precision = "bf16 products" if "--precision bf16" in args.tlmc_args else "float32"
    print(f"# end-to-end latency, batch 1: tlmc -O{args.opt} {args.tlmc_args} (target "
          f"{', '.join(targets) or '?'}, {precision}) vs PyTorch {torch.__version__} eager "
          f"(inference_mode) and TorchScript (traced, frozen, optimize_for_inference), and the "
          f"PyPI peers of {args.peers_venv}; tlmc's C compiled by {c_compiler()}")
    threads = f"{args.threads} thread{'s' if args.threads > 1 else ''}"
    print(f"# {cpu_model()}, {os.cpu_count()} online cores, load average {load[0]:.2f}; "
          f"{threads} for every side; ONNX opset {args.opset}; median of up to "
          f"{max(1, args.runs // args.rounds) * args.rounds} runs per side in {args.rounds} "
          f"rounds, at most {args.max_time:g} s per side; "
          f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}")
    print("# float32 FMA peak measured after the models, " +
          (f"{peak[0]:.0f} GFLOP/s ({peak[1]}, {threads})" if peak else "not measured"))
    print(f"# {blas_note(libs)}")
    # Each peer's name and the precision it computed in, as it reported them.
    for kind in args.peer_kinds:
        seen = {(r["peers"][kind]["label"], r["peers"][kind]["precision"]) for _, r in rows
                if "peers" in r and "label" in r["peers"][kind]}
        for label, precision in sorted(seen):
            print(f"# {PEER_COLUMNS[kind]}: {label}, computing in {precision}")
    header = (["model", "tlmc ms", "eager 1.13 ms", "TorchScript 1.13 ms"] +
              [PEER_COLUMNS[k] + " ms" for k in args.peer_kinds] +
              ["ratio", "spread", "runs", "max abs diff", "build"])
    table = []
    for name, r in rows:
        if "error" in r:
            table.append([name] + ["-"] * (len(header) - 2) + ["FAILED: " + r["error"]])
            continue
        cells = [name, f"{r['tlmc_ms']:.2f}", f"{r['torch_ms']:.2f}", f"{r['script_ms']:.2f}"]
        fp32 = [r["torch_ms"], r["script_ms"]]
        diffs = [f"{r['diff']:.1e}", f"{r['script_diff']:.1e}"]
        for kind in args.peer_kinds:
            p = r["peers"][kind]
            if "ms" not in p:
                cells.append("failed: " + p.get("error", "?")[:40])
                diffs.append("-")
                continue
            cells.append(f"{p['ms']:.2f}" + ("" if p["precision"] == "f32"
                                             else f" ({p['precision']})"))
            diffs.append(f"{p['diff']:.1e}")
            if p["precision"] == "f32":
                fp32.append(p["ms"])
        cells += [f"{min(fp32) / r['tlmc_ms']:.2f}", f"{r['spread']:.2f}", r["runs"],
                  " / ".join(diffs), r["build"]]
        table.append(cells)
    widths = [max(len(str(x[i])) for x in table + [header]) for i in range(len(header))]

    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"

    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in table:
        print(line(row))
    print("# ratio = the fastest float32 peer's time / tlmc's time (above 1: tlmc is faster); "
          "a peer computing in another precision (bf16) is shown but not counted; runs = timed "
          "runs per side, in column order; max abs diff = each side's outputs against PyTorch "
          "1.13 eager (tlmc first), a sanity check, not a test")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
