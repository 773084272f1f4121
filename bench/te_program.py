"""tlmc's tensor-expression programs, as `tlmc --dump te-text` prints them, read in Python.

The text (version 1, docs/driver.md) holds tensors, then stages in topological order, each
`tensor[axes] = reduce over reduce_axes of body`, the body an expression in prefix form. This
module reads it into plain tuples, and evaluates a program with numpy, in float64, one stage
after the other (the reference that a kernel built by another tool is checked against:
bench/metaschedule.py). Nothing here depends on tlmc's build or on TVM.

Expressions are tuples: ("i", int), ("f", dtype, float), ("v", var_id), ("l", tensor, [idx]),
("u", op, a), ("b", op, a, b), ("s", cond, then, else), ("c", dtype, a).
"""
import re
import sys

import numpy as np

MAGIC, VERSION = "tlmc-te", 1
KERNEL = re.compile(r"^# kernel (\d+) \(workload ([0-9a-f]{16})\)$")

NUMPY_DTYPE = {"float32": np.float32, "float16": np.float16, "int32": np.int32,
               "int64": np.int64, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}


class Tensor:
    def __init__(self, name, dtype, shape, stage, constant):
        self.name, self.dtype, self.shape = name, dtype, shape
        self.stage, self.constant = stage, constant


class Stage:
    def __init__(self, name, output, op, reduce, axes, reduce_axes, body):
        self.name, self.output, self.op, self.reduce = name, output, op, reduce
        self.axes, self.reduce_axes, self.body = axes, reduce_axes, body  # axes: [(var, name, n)]


class Program:
    def __init__(self, tensors, stages, inputs, outputs, key=None):
        self.tensors, self.stages, self.inputs, self.outputs = tensors, stages, inputs, outputs
        self.key = key

    def macs(self):
        """Multiply-adds of its sum reductions whose body multiplies (a product, a
        convolution): points x reduction extent, as bench.md counts a workload's flops."""
        total = 0
        for s in self.stages:
            if s.reduce == "sum" and s.body[0] == "b" and s.body[1] == "*":
                total += prod(a[2] for a in s.axes) * prod(a[2] for a in s.reduce_axes)
        return total


def prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


class TextError(ValueError):
    pass


def unescape(word):
    if word == "%":
        return ""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), word)


def parse(text, key=None):
    """One program's text (from `tlmc-te 1` to `end`); raises TextError naming the word."""
    words = text.split()
    at = [0]

    def word():
        if at[0] == len(words):
            raise TextError("program text ends early")
        at[0] += 1
        return words[at[0] - 1]

    def expect(w):
        got = word()
        if got != w:
            raise TextError(f"program text, word {at[0]}: expected '{w}', got '{got}'")

    def integer():
        w = word()
        try:
            return int(w)
        except ValueError:
            raise TextError(f"program text, word {at[0]}: '{w}' is not an integer") from None

    def expr():
        kind = word()
        if kind == "i":
            return ("i", integer())
        if kind == "f":
            dtype = word()
            return ("f", dtype, float.fromhex(word()))
        if kind == "v":
            var = integer()
            word()  # its name, for printing
            return ("v", var)
        if kind == "l":
            word()  # the load's dtype: the tensor's
            tensor, rank = integer(), integer()
            return ("l", tensor, [expr() for _ in range(rank)])
        if kind == "u":
            op = word()
            return ("u", op, expr())
        if kind == "b":
            op = word()
            a = expr()
            return ("b", op, a, expr())
        if kind == "s":
            c = expr()
            t = expr()
            return ("s", c, t, expr())
        if kind == "c":
            dtype = word()
            return ("c", dtype, expr())
        raise TextError(f"program text, word {at[0]}: '{kind}' does not start an expression")

    def axes():
        return [(integer(), unescape(word()), integer()) for _ in range(integer())]

    expect(MAGIC)
    if integer() != VERSION:
        raise TextError(f"program text of another version (this reader reads {VERSION})")
    expect("vars")
    integer()
    expect("tensors")
    n_tensors = integer()
    expect("stages")
    n_stages = integer()
    tensors = []
    for _ in range(n_tensors):
        expect("tensor")
        name, dtype = unescape(word()), word()
        shape = [integer() for _ in range(integer())]
        tensors.append(Tensor(name, dtype, shape, integer(), integer() == 1))
    stages = []
    for _ in range(n_stages):
        expect("stage")
        name, output, op, reduce = unescape(word()), integer(), unescape(word()), word()
        ax = axes()
        stages.append(Stage(name, output, op, reduce, ax, axes(), expr()))
    expect("inputs")
    inputs = [integer() for _ in range(integer())]
    expect("outputs")
    outputs = [integer() for _ in range(integer())]
    expect("end")
    if at[0] != len(words):
        raise TextError("text follows the end of the program")
    return Program(tensors, stages, inputs, outputs, key)


def split_dump(text):
    """`tlmc --dump te-text`'s output: [(workload key, program text)] in the plan's order."""
    kernels = []
    for line in text.splitlines():
        m = KERNEL.match(line)
        if m:
            kernels.append((m.group(2), []))
        elif kernels:
            kernels[-1][1].append(line)
    return [(key, "\n".join(lines) + "\n") for key, lines in kernels]


def parse_dump(text):
    """`tlmc --dump te-text`'s output: {workload key: Program}, each distinct program once."""
    found = {}
    for key, body in split_dump(text):
        if key not in found:
            found[key] = parse(body, key)
    return found


# ---- evaluation with numpy ------------------------------------------------------------------

UNARY = {"neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh,
         "abs": np.abs, "not": np.logical_not, "floor": np.floor,
         "sigmoid": lambda a: 1.0 / (1.0 + np.exp(-a))}


def erf(a):
    from math import erf as scalar_erf
    return np.vectorize(scalar_erf, otypes=[np.float64])(a)


def binary(op, a, b, integral):
    if op == "/":
        if integral:  # C's division of integers: toward zero
            q = np.abs(a) // np.maximum(np.abs(b), 1)
            return np.where((a < 0) != (b < 0), -q, q)
        return a / b
    fn = {"+": np.add, "-": np.subtract, "*": np.multiply, "floordiv": np.floor_divide,
          "floormod": np.mod, "min": np.minimum, "max": np.maximum, "pow": np.power,
          "<": np.less, "<=": np.less_equal, "==": np.equal, "!=": np.not_equal,
          "&&": np.logical_and, "||": np.logical_or, "and": np.logical_and,
          "or": np.logical_or}.get(op)
    if fn is None:
        raise TextError(f"no numpy evaluation of the binary operator '{op}'")
    return fn(a, b)


def is_integral(dtype):
    return dtype.startswith("int") or dtype.startswith("uint") or dtype == "bool"


def evaluate(program, inputs, chunk=1 << 22):
    """The program's outputs (float64 or int64 numpy arrays, in its output order) for
    `inputs` (numpy arrays in its input order). Each stage is computed whole, its points
    in chunks so that a chunk times its reduction holds about `chunk` values."""
    values = {t: np.asarray(a) for t, a in zip(program.inputs, inputs)}
    for s in program.stages:
        values[s.output] = evaluate_stage(program, s, values, chunk)
    return [values[t] for t in program.outputs]


def evaluate_stage(program, s, values, chunk):
    out = program.tensors[s.output]
    shape = [a[2] for a in s.axes]
    reduce_shape = [a[2] for a in s.reduce_axes]
    points, reduction = prod(shape), prod(reduce_shape)
    result = np.empty(points, dtype=np.int64 if is_integral(out.dtype) else np.float64)
    r_coords = np.unravel_index(np.arange(reduction), reduce_shape) if reduce_shape else []
    step = max(1, chunk // max(1, reduction))
    for lo in range(0, points, step):
        flat = np.arange(lo, min(points, lo + step))
        coords = np.unravel_index(flat, shape) if shape else []
        env = {a[0]: c.reshape(-1, 1) for a, c in zip(s.axes, coords)}
        env.update({a[0]: c.reshape(1, -1) for a, c in zip(s.reduce_axes, r_coords)})
        v = np.broadcast_to(expr_value(program, s.body, env, values), (len(flat), reduction))
        if s.reduce == "none":
            result[lo:lo + len(flat)] = v[:, 0]
        else:
            result[lo:lo + len(flat)] = {"sum": np.sum, "max": np.max, "min": np.min}[s.reduce](
                v, axis=1)
    return result.reshape(shape)


def expr_value(program, e, env, values):
    kind = e[0]
    if kind == "i":
        return np.int64(e[1])
    if kind == "f":
        return np.float64(e[2])
    if kind == "v":
        return env[e[1]]
    if kind == "l":
        t = program.tensors[e[1]]
        # Clamped: a select may load outside the tensor on the side it does not take
        # (padding); only the side it takes counts.
        idx = tuple(np.clip(expr_value(program, i, env, values), 0, n - 1)
                    for i, n in zip(e[2], t.shape))
        data = values[e[1]]
        v = data[idx] if idx else data[()]
        return v.astype(np.int64 if is_integral(t.dtype) else np.float64)
    if kind == "u":
        a = expr_value(program, e[2], env, values)
        if e[1] == "erf":
            return erf(a)
        fn = UNARY.get(e[1])
        if fn is None:
            raise TextError(f"no numpy evaluation of the unary operator '{e[1]}'")
        with np.errstate(all="ignore"):
            return fn(a)
    if kind == "b":
        a = expr_value(program, e[2], env, values)
        b = expr_value(program, e[3], env, values)
        integral = np.issubdtype(np.result_type(a, b), np.integer)
        with np.errstate(all="ignore"):
            return binary(e[1], a, b, integral)
    if kind == "s":
        c = expr_value(program, e[1], env, values)
        return np.where(c, expr_value(program, e[2], env, values),
                        expr_value(program, e[3], env, values))
    if kind == "c":
        a = expr_value(program, e[2], env, values)
        if is_integral(e[1]):
            return np.trunc(a).astype(np.int64) if e[1] != "bool" else (a != 0)
        return np.asarray(a, dtype=np.float64).astype(NUMPY_DTYPE.get(e[1], np.float64)).astype(
            np.float64)
    raise TextError(f"unknown expression kind '{kind}'")


def random_inputs(program, seed=0):
    """Inputs of the program's dtypes: floats uniform in [-1, 1], integers in [0, 4)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in program.inputs:
        tensor = program.tensors[t]
        dtype = NUMPY_DTYPE.get(tensor.dtype)
        if dtype is None:
            raise TextError(f"input {tensor.name}: no numpy dtype for {tensor.dtype}")
        if is_integral(tensor.dtype):
            out.append(rng.integers(0, 4, size=tensor.shape).astype(dtype))
        else:
            out.append(rng.uniform(-1, 1, size=tensor.shape).astype(dtype))
    return out


if __name__ == "__main__":
    # python3 te_program.py DUMP.txt: each program's key, stages and multiply-adds.
    for key, p in parse_dump(open(sys.argv[1]).read()).items():
        print(key, len(p.stages), "stages", p.macs(), "MACs")
