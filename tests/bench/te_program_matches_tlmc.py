#!/usr/bin/python3
"""bench/te_program.py, the reader of `tlmc --dump te-text` that bench/metaschedule.py hands
to TVM, evaluates each program as tlmc's own library computes it.

For small models of the operators the benchmarks' units hold (padded and strided
convolutions with their epilogues, a depthwise one with SiLU, Gemm with GELU, Softmax,
LayerNormalization, MaxPool), it builds the library with tlmc, runs it through ctypes on
random inputs, evaluates the dumped programs in order with numpy (each kernel's tensors
found by name), and compares every output. Usage: te_program_matches_tlmc.py TLMC WORKDIR.
"""
import ctypes
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import te_program  # noqa: E402

RNG = np.random.default_rng(7)


def model(name, inputs, weights, nodes, outputs):
    """{name, YAML text, its weights file's bytes, weight values, input shapes}; weights:
    {name: shape}, drawn at random."""
    lines = ["tlmc: 1", f"name: {name}", "inputs:"]
    lines += [f"  {n}: {{shape: {list(s)}}}" for n, s in inputs.items()]
    blob, values = b"", {}
    if weights:
        lines.append("weights:")
    for n, s in weights.items():
        v = RNG.uniform(-0.5, 0.5, size=s).astype(np.float32)
        values[n] = v
        lines.append(f"  {n}: {{shape: {list(s)}, file: {name}.bin, offset: {len(blob)}}}")
        blob += v.tobytes()
    lines.append("nodes:")
    lines += [f"  - {n}" for n in nodes]
    lines.append(f"outputs: {outputs}")
    return {"name": name, "yaml": "\n".join(lines) + "\n", "blob": blob, "weights": values,
            "inputs": inputs}


MODELS = [
    model("conv_s2", {"x": [1, 5, 11, 9]}, {"w": [7, 5, 3, 3], "b": [7]},
          ["{op: Conv, inputs: [x, w, b], outputs: [c], "
           "attrs: {strides: [2, 2], pads: [1, 1, 1, 1]}}",
           "{op: Relu, inputs: [c], outputs: [y]}"], ["y"]),
    model("dw_silu", {"x": [1, 6, 10, 10]}, {"w": [6, 1, 5, 5]},
          ["{op: Conv, inputs: [x, w], outputs: [c], attrs: {group: 6, pads: [2, 2, 2, 2]}}",
           "{op: Sigmoid, inputs: [c], outputs: [s]}",
           "{op: Mul, inputs: [c, s], outputs: [y]}"], ["y"]),
    model("gemm_gelu", {"x": [3, 50]}, {"w": [20, 50], "b": [20], "h": [1], "r": [1]},
          ["{op: Gemm, inputs: [x, w, b], outputs: [g], attrs: {transB: 1}}",
           "{op: Mul, inputs: [g, r], outputs: [gs]}",
           "{op: Erf, inputs: [gs], outputs: [e]}",
           "{op: Add, inputs: [e, h], outputs: [e1]}",
           "{op: Mul, inputs: [g, e1], outputs: [y]}"], ["y"]),
    model("softmax", {"x": [4, 37]}, {},
          ["{op: Softmax, inputs: [x], outputs: [y], attrs: {axis: -1}}"], ["y"]),
    model("layernorm", {"x": [2, 5, 24]}, {"g": [24], "b": [24]},
          ["{op: LayerNormalization, inputs: [x, g, b], outputs: [y], attrs: {axis: -1}}"],
          ["y"]),
    model("maxpool", {"x": [1, 3, 13, 13]}, {},
          ["{op: MaxPool, inputs: [x], outputs: [y], "
           "attrs: {kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1]}}"], ["y"]),
]


def build(tlmc, work, name, yaml_text, blob):
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".yaml")
    with open(path, "w") as f:
        f.write(yaml_text)
    with open(os.path.join(folder, name + ".bin"), "wb") as f:
        f.write(blob)
    src = os.path.join(folder, "src")
    dump = subprocess.run([tlmc, path, "-O0", "--dump", "te-text", "--emit=source", "-o", src,
                           "--tuning-db", os.path.join(folder, "none.db")],
                          check=True, capture_output=True, text=True).stdout
    so = os.path.join(src, f"lib{name}.so")
    subprocess.run(["cc", "-O2", "-std=c11", "-Wno-psabi", "-fPIC", "-shared", f"{name}.c",
                    f"{name}_runtime.c", f"{name}_weights.S", "-o", so, "-lpthread", "-lm"],
                   cwd=src, check=True)
    return dump, so


def run_library(so, name, inputs, output_shapes):
    lib = ctypes.CDLL(so)
    getattr(lib, name + "_workspace_size").restype = ctypes.c_size_t
    ws = np.zeros(getattr(lib, name + "_workspace_size")() + 64, dtype=np.uint8)
    ws_ptr = ws.ctypes.data + (-ws.ctypes.data) % 64
    outputs = [np.zeros(s, dtype=np.float32) for s in output_shapes]
    ins = (ctypes.c_void_p * len(inputs))(*[a.ctypes.data for a in inputs])
    outs = (ctypes.c_void_p * len(outputs))(*[a.ctypes.data for a in outputs])
    rc = getattr(lib, name + "_run")(ins, outs, ctypes.c_void_p(ws_ptr))
    if rc != 0:
        sys.exit(f"{name}: {name}_run returned {rc}")
    return outputs


def main():
    tlmc, work = sys.argv[1], sys.argv[2]
    failures = 0
    for m in MODELS:
        name = m["name"]
        dump, so = build(tlmc, work, name, m["yaml"], m["blob"])
        kernels = te_program.split_dump(dump)  # in the plan's order
        values = dict(m["weights"])
        inputs = [RNG.uniform(-2, 2, size=s).astype(np.float32) for s in m["inputs"].values()]
        values.update(zip(m["inputs"], inputs))
        for key, body in kernels:
            p = te_program.parse(body, key)
            missing = [p.tensors[i].name for i in p.inputs if p.tensors[i].name not in values]
            if missing:
                sys.exit(f"{name}: kernel {key} reads {missing}, which no earlier kernel, "
                         "input or weight is named")
            got = te_program.evaluate(p, [values[p.tensors[i].name] for i in p.inputs])
            for t, v in zip(p.outputs, got):
                values[p.tensors[t].name] = v.astype(np.float32)
        want = values["y"].astype(np.float64)
        got = run_library(so, name, inputs, [want.shape])[0].astype(np.float64)
        err = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
        ok = err < 1e-4
        failures += not ok
        print(f"{name}: {len(kernels)} kernel(s), largest difference {err:.2e} "
              f"{'ok' if ok else 'WRONG'}")
    if failures:
        sys.exit(f"{failures} model(s) evaluate otherwise than tlmc's library")


if __name__ == "__main__":
    main()
