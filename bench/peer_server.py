"""One peer of bench/e2e_vs_pytorch.py, run by the Python of the peers' virtual environment.

    peer_server.py --kind KIND --model NAME --onnx FILE --inputs A.npy,B.npy --threads N
        [--state-dict FILE] [--zoo tests/zoo]

KIND is one of
  ort           ONNX Runtime, CPU, every graph optimisation (ORT_ENABLE_ALL), N intra-op
                threads, one inter-op thread, sequential execution;
  ov-f32        OpenVINO, CPU plugin, PERFORMANCE_HINT LATENCY, N inference threads,
                INFERENCE_PRECISION_HINT f32;
  ov            the same at OpenVINO's default precision (bf16 on CPUs with AVX512_BF16 or
                AMX);
  torch-eager   the zoo's PyTorch model under this environment's torch 2.x,
                torch.inference_mode, torch.set_num_threads(N);
  torch-compile the same through torch.compile (default mode, the inductor backend); its
                compilation happens in the warm-up.
  tlmc          a library tlmc compiled from the ONNX file (--library, --name; the
                outputs' shapes and types in --outputs: 1x1000:float32,...), loaded with
                ctypes, NAME_set_num_threads(N); run by Debian's Python (numpy only), so that
                no other runtime's threads share its process.
The torch kinds build the model with tests/zoo/export_models.py and load the weights the
benchmark saved from the exported model (--state-dict), so that every side computes the
same function.

The protocol, one JSON object a line: the server first writes {"ready": ..., "label": ...,
"precision": ...} (or {"error": ...}); then it answers each command of standard input:
  warm                     runs at least 2 times and 0.2 s   -> {"ok": true}
  time RUNS MAX_SECONDS    up to RUNS timed runs, fewer when they take MAX_SECONDS (at least
                           one)                              -> {"times": [seconds, ...]}
  outputs FILE             one run, its outputs saved to FILE (numpy .npz, arr_0, arr_1, ...)
                                                             -> {"ok": true}
Timing is the server's own (time.perf_counter around one inference), so no pipe is timed.
"""

import argparse
import json
import os
import sys

import numpy as np

# The warm-up and the timed runs are the benchmark's own, so that every side is timed alike.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_vs_pytorch import timed, warm_up  # noqa: E402


def load_ort(args, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(args.onnx, so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    named = dict(zip(names, feeds))

    def run():
        return sess.run(None, named)
    return run, f"ONNX Runtime {ort.__version__}", "f32"


def load_ov(args, feeds, f32):
    import openvino as ov
    core = ov.Core()
    config = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": args.threads}
    if f32:
        config["INFERENCE_PRECISION_HINT"] = "f32"
    compiled = core.compile_model(args.onnx, "CPU", config)
    request = compiled.create_infer_request()
    # The precision it computes in, as the other peers name theirs ("<Type: 'bfloat16'>").
    reported = str(compiled.get_property("INFERENCE_PRECISION_HINT"))
    names = {"float32": "f32", "f32": "f32", "bfloat16": "bf16", "bf16": "bf16",
             "float16": "f16", "f16": "f16"}
    precision = next((v for k, v in names.items() if f"'{k}'" in reported or reported == k),
                     reported)

    def run():
        result = request.infer(feeds)
        return [result[o] for o in compiled.outputs]
    return run, f"OpenVINO {ov.get_version().split('-')[0]}", precision


def load_torch(args, feeds, compiled):
    import torch
    sys.path.insert(0, args.zoo)
    import export_models as zoo
    torch.set_num_threads(args.threads)
    model, _, _ = zoo.build(args.model)
    if args.state_dict:
        model.load_state_dict(torch.load(args.state_dict))
    model.eval()
    inputs = [torch.from_numpy(a) for a in feeds]
    fn = torch.compile(model) if compiled else model

    def run():
        with torch.inference_mode():
            out = fn(*inputs)
        out = (out,) if isinstance(out, torch.Tensor) else tuple(out)
        return [o.numpy() for o in out]
    label = f"torch {torch.__version__.split('+')[0]}" + (" compile" if compiled else " eager")
    return run, label, "f32"


def load_tlmc(args, feeds):
    from e2e_vs_pytorch import NP_DTYPE, TlmcLibrary
    outputs = []
    for spec in args.outputs.split(","):
        shape, dtype = spec.split(":")
        outputs.append(np.empty([int(d) for d in shape.split("x") if d], dtype=NP_DTYPE[dtype]))
    lib = TlmcLibrary(args.library, args.name, feeds, outputs, args.threads)
    return lib, "tlmc", "f32"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", required=True,
                    choices=("ort", "ov-f32", "ov", "torch-eager", "torch-compile", "tlmc"))
    ap.add_argument("--model", required=True)
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--inputs", required=True, help="comma-separated .npy files, in order")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--state-dict", default="")
    ap.add_argument("--library", default="", help="tlmc: the shared library")
    ap.add_argument("--name", default="", help="tlmc: the model's name (NAME_run)")
    ap.add_argument("--outputs", default="", help="tlmc: the outputs' shapes and types")
    ap.add_argument("--zoo", default=os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "tests", "zoo"))
    args = ap.parse_args()
    out = sys.stdout
    sys.stdout = sys.stderr  # what the libraries print stays off the protocol

    def say(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    feeds = [np.load(p) for p in args.inputs.split(",")]
    try:
        if args.kind == "ort":
            run, label, precision = load_ort(args, feeds)
        elif args.kind == "tlmc":
            run, label, precision = load_tlmc(args, feeds)
        elif args.kind in ("ov", "ov-f32"):
            run, label, precision = load_ov(args, feeds, args.kind == "ov-f32")
        else:
            run, label, precision = load_torch(args, feeds, args.kind == "torch-compile")
    except Exception as e:  # the benchmark reports it in the table and goes on
        say({"error": f"{type(e).__name__}: {e}".splitlines()[0][:200]})
        return 1
    say({"ready": True, "label": label, "precision": precision})
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        try:
            if cmd[0] == "warm":
                warm_up(run)
                say({"ok": True})
            elif cmd[0] == "time":
                say({"times": timed(run, int(cmd[1]), float(cmd[2]))})
            elif cmd[0] == "outputs":
                np.savez(cmd[1], *[np.asarray(o) for o in run()])
                say({"ok": True})
            else:
                say({"error": f"unknown command {cmd[0]}"})
        except Exception as e:
            say({"error": f"{type(e).__name__}: {e}".splitlines()[0][:200]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
