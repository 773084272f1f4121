#!/usr/bin/python3
"""Writes synthetic models for the language model's corpus: one small graph each (a
convolution, a product with its epilogue, attention's products, a normalisation, a
reduction or a pool), at shapes drawn from wide ranges, so that the corpus holds shape
families beside the zoo's layers (the zoo's networks repeat a few dozen of them).

    /usr/bin/python3 scripts/lm_synthetic_models.py --out DIR [--count N] [--seed S]

Writes DIR/syn_SEED_NNNNN.yaml for N models (default 2000), the same files for the same seed
and count; a file that exists is left alone. Every model is a tlmc YAML graph (its weights
drawn from a seeded uniform distribution, no weight file). `tlmc lm sample --hold-out
lm/held_out_keys.txt` then drops any that falls in a held-out shape family (docs/lm.md), so
the drawing need not avoid them. Work is bounded (at most about 4e8 multiply-adds a model),
so that demonstrations measure in seconds.
"""

import argparse
import math
import os
import random
import sys

CHANNELS = [3, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64, 72, 80, 96, 100, 112, 120, 128,
            144, 160, 176, 192, 200, 224, 240, 256, 288, 320, 384, 400, 448, 480, 512, 576, 640,
            672, 768, 960, 1024]
KERNELS = [(1, 1)] * 4 + [(3, 3)] * 4 + [(5, 5), (7, 7), (1, 3), (3, 1), (1, 5), (5, 1), (1, 7),
                                        (7, 1), (2, 2), (4, 4)]
EPILOGUES = ["none", "bias", "relu", "relu", "gelu", "silu", "tanh", "sigmoid", "clip"]
MAX_MACS = 4e8


def channels(rng):
    if rng.random() < 0.25:
        return rng.randint(3, 700)
    return rng.choice(CHANNELS)


class Graph:
    """A tlmc YAML graph written line by line."""

    def __init__(self, name, seed):
        self.name, self.seed = name, seed
        self.inputs, self.weights, self.nodes = [], [], []
        self.count = 0

    def tensor(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def input(self, shape):
        name = self.tensor("x")
        self.inputs.append(f"  {name}: {{shape: {list(shape)}}}")
        return name

    def weight(self, shape, scale=0.1, data=None, dtype=None):
        name = self.tensor("w")
        if data is not None:
            kind = f", dtype: {dtype}" if dtype else ""
            self.weights.append(f"  {name}: {{shape: {list(shape)}{kind}, data: {data}}}")
        else:
            self.seed += 1
            self.weights.append(f"  {name}: {{shape: {list(shape)}, init: {{uniform: "
                                f"[{-scale}, {scale}]}}, seed: {self.seed}}}")
        return name

    def node(self, op, inputs, attrs=None):
        out = self.tensor("t")
        a = f", attrs: {{{attrs}}}" if attrs else ""
        self.nodes.append(f"  - {{op: {op}, inputs: [{', '.join(inputs)}], outputs: [{out}]{a}}}")
        return out

    def text(self, comment, output):
        lines = [f"# {comment}", "tlmc: 1", f"name: {self.name}", "inputs:"] + self.inputs
        if self.weights:
            lines += ["weights:"] + self.weights
        lines += ["nodes:"] + self.nodes + [f"outputs: [{output}]"]
        return "\n".join(lines) + "\n"


def epilogue(g, rng, x, kind, bias_shape):
    if kind != "none":
        x = g.node("Add", [x, g.weight(bias_shape)])
    if kind == "relu":
        x = g.node("Relu", [x])
    elif kind == "gelu":  # the erf form, as PyTorch exports it
        z = x
        e = g.node("Erf", [g.node("Div", [z, g.weight([], data=[1.4142135623730951])])])
        x = g.node("Mul", [g.node("Mul", [z, g.node("Add", [e, g.weight([], data=[1.0])])]),
                           g.weight([], data=[0.5])])
    elif kind == "silu":
        x = g.node("Mul", [x, g.node("Sigmoid", [x])])
    elif kind in ("tanh", "sigmoid"):
        x = g.node(kind.capitalize(), [x])
    elif kind == "clip":
        x = g.node("Clip", [x, g.weight([], data=[0.0]), g.weight([], data=[6.0])])
    return x


def conv(g, rng):
    for _ in range(100):
        kh, kw = rng.choice(KERNELS)
        stride = rng.choice([1, 1, 1, 2, 2, 3]) if max(kh, kw) > 1 else rng.choice([1, 1, 2])
        dilation = 2 if max(kh, kw) == 3 and rng.random() < 0.08 else 1
        cin = channels(rng)
        kind = rng.random()
        if kind < 0.15 and cin > 3:  # depthwise
            groups, cout = cin, cin * rng.choice([1, 1, 1, 2])
        elif kind < 0.25:  # grouped
            groups = rng.choice([2, 4, 8, 16, 32])
            cin = max(groups, cin // groups * groups)
            cout = max(groups, channels(rng) // groups * groups)
        else:
            groups, cout = 1, channels(rng)
        size = rng.randint(max(kh, kw) * dilation, 120 if cin < 100 else 60)
        h, w = (size, size) if rng.random() < 0.8 else (size, rng.randint(max(kw, 4), 120))
        pad_h = (kh - 1) * dilation // 2 if rng.random() < 0.8 else 0
        pad_w = (kw - 1) * dilation // 2 if rng.random() < 0.8 else 0
        oh = (h + 2 * pad_h - dilation * (kh - 1) - 1) // stride + 1
        ow = (w + 2 * pad_w - dilation * (kw - 1) - 1) // stride + 1
        if oh < 1 or ow < 1:
            continue
        batch = 1 if rng.random() < 0.85 else rng.choice([2, 3, 4])
        macs = batch * cout * oh * ow * (cin // groups) * kh * kw
        if macs > MAX_MACS or macs < 2e4:
            continue
        x = g.input([batch, cin, h, w])
        attrs = (f"kernel_shape: [{kh}, {kw}], strides: [{stride}, {stride}], "
                 f"pads: [{pad_h}, {pad_w}, {pad_h}, {pad_w}]")
        if dilation > 1:
            attrs += f", dilations: [{dilation}, {dilation}]"
        if groups > 1:
            attrs += f", group: {groups}"
        y = g.node("Conv", [x, g.weight([cout, cin // groups, kh, kw])], attrs)
        y = epilogue(g, rng, y, rng.choice(["none", "bias", "relu", "relu", "relu", "clip",
                                            "silu"]), [1, cout, 1, 1])
        return y, (f"Conv {kh}x{kw}/{stride} dilation {dilation} groups {groups}, "
                   f"N{batch} C{cin} H{h} W{w} -> K{cout}")
    raise RuntimeError("no convolution within the bounds")


def product(g, rng):
    for _ in range(100):
        m = rng.choice([1, 1, 2, 4, 8, rng.randint(1, 64), rng.randint(16, 512),
                        rng.choice([64, 128, 196, 256, 384, 512])])
        k, n = channels(rng) * rng.choice([1, 1, 2, 4]), channels(rng) * rng.choice([1, 1, 2, 4])
        if m * k * n > MAX_MACS or m * k * n < 1e4 or k * n > 8e6:
            continue
        x = g.input([m, k])
        y = g.node("MatMul", [x, g.weight([k, n])])
        kind = rng.choice(EPILOGUES)
        y = epilogue(g, rng, y, kind, [n])
        if rng.random() < 0.1:
            y = g.node("Softmax", [y], "axis: -1")
            kind += " + softmax"
        return y, f"MatMul [{m},{k}] x [{k},{n}] + {kind}"
    raise RuntimeError("no product within the bounds")


def attention(g, rng):
    heads = rng.choice([1, 2, 3, 4, 6, 8, 12, 16])
    seq = rng.choice([rng.randint(7, 300), 16, 32, 49, 64, 77, 100, 196, 256])
    width = rng.choice([16, 24, 32, 40, 48, 64, 80, 96, 128])
    q = g.input([heads, seq, width])
    if rng.random() < 0.5:  # scores, then their probabilities
        y = g.node("MatMul", [q, g.input([heads, width, seq])])
        if rng.random() < 0.6:
            y = g.node("Softmax", [y], "axis: -1")
        return y, f"scores [{heads},{seq},{width}] x [{heads},{width},{seq}]"
    y = g.node("MatMul", [g.input([heads, seq, seq]), q])
    return y, f"probabilities times values [{heads},{seq},{seq}] x [{heads},{seq},{width}]"


def row_op(g, rng):
    rows, width = rng.randint(1, 512), rng.choice([channels(rng), rng.randint(8, 4000)])
    x = g.input([rows, width])
    kind = rng.choice(["Softmax", "LayerNormalization", "ReduceMean", "ReduceSum"])
    if kind == "Softmax":
        y = g.node("Softmax", [x], "axis: -1")
    elif kind == "LayerNormalization":
        y = g.node(kind, [x, g.weight([width]), g.weight([width])], "axis: -1")
    elif kind == "ReduceSum":  # its axes an input since opset 13
        y = g.node(kind, [x, g.weight([1], data=[-1], dtype="int64")], "keepdims: 0")
    else:
        y = g.node(kind, [x], "axes: [-1], keepdims: 0")
    return y, f"{kind} [{rows},{width}] over the last axis"


def pool(g, rng):
    c, size = channels(rng), rng.randint(7, 112)
    x = g.input([1, c, size, size])
    if rng.random() < 0.3:
        return g.node("GlobalAveragePool", [x]), f"GlobalAveragePool C{c} {size}x{size}"
    k = rng.choice([2, 3, 3, 5])
    s = rng.choice([1, 2, 2]) if k > 2 else 2
    p = k // 2 if rng.random() < 0.6 else 0
    op = rng.choice(["MaxPool", "MaxPool", "AveragePool"])
    y = g.node(op, [x], f"kernel_shape: [{k}, {k}], strides: [{s}, {s}], pads: [{p}, {p}, {p}, {p}]")
    return y, f"{op} {k}x{k}/{s} pad {p}, C{c} {size}x{size}"


KINDS = [(conv, 0.42), (product, 0.28), (attention, 0.1), (row_op, 0.1), (pool, 0.1)]


def model(seed, index):
    rng = random.Random(seed * 1000003 + index)
    g = Graph(f"syn_{seed}_{index:05d}", seed * 100000 + index * 50)
    draw, total = rng.random(), 0.0
    for make, weight in KINDS:
        total += weight
        if draw < total:
            break
    output, comment = make(g, rng)
    return g.text(f"synthetic model {index} of seed {seed} (scripts/lm_synthetic_models.py): "
                  f"{comment}", output)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.count < 1 or args.seed < 0:
        sys.exit("lm_synthetic_models: --count takes a count >= 1 and --seed one >= 0")
    os.makedirs(args.out, exist_ok=True)
    written = 0
    for i in range(args.count):
        path = os.path.join(args.out, f"syn_{args.seed}_{i:05d}.yaml")
        if os.path.exists(path):
            continue
        with open(path + ".tmp", "w") as f:
            f.write(model(args.seed, i))
        os.replace(path + ".tmp", path)
        written += 1
    print(f"lm_synthetic_models: {written} written, {args.count - written} there already, "
          f"in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
