#!/usr/bin/python3
"""Writes the small ONNX models the ONNX-import tests read, with ONNX's own Python package
and PyTorch's exporter (Debian's python3-onnx and python3-torch): real files from real
exporters. Usage: make_test_models.py NAME OUT_DIR. Models that carry expected values also
write in0.bin (the input) and want0.bin (the expected output), raw little-endian."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model, out, name="model.onnx", **kwargs):
    onnx.checker.check_model(model)
    onnx.save(model, f"{out}/{name}", **kwargs)


def opset_model(nodes, inputs, outputs, opset, initializers=()):
    graph = helper.make_graph(nodes, "test_graph", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def raw(out, name, array):
    np.ascontiguousarray(array).tofile(f"{out}/{name}")


def unsupported(out):
    x = value("x", [2, 4])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Mod", ["r", "r"], ["m"], name="mod_a"),
        helper.make_node("Mod", ["m", "r"], ["y"], name="mod_b"),
        helper.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
    ]
    save(opset_model(nodes, [x], [value("y", [2, 4])], 13), out)


def symbolic(out):
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    save(opset_model(nodes, [value("x", ["batch", 4])], [value("y", ["batch", 4])], 13), out)


def old_opset(out, opset=11):
    """Softmax over axis 1 of a 3-D input at opset 11 (flattened to 2-D), ReduceSum with
    axes as an attribute: the pre-13 forms, with numpy's answers."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (2, 3, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Softmax", ["x"], ["s"], axis=1, name="softmax"),
        helper.make_node("ReduceSum", ["s"], ["y"], axes=[2], keepdims=1, name="sum"),
    ]
    save(opset_model(nodes, [value("x", [2, 3, 4])], [value("y", [2, 3, 1])], opset), out)
    flat = x.reshape(2, 12)
    e = np.exp(flat - flat.max(axis=1, keepdims=True))
    s = (e / e.sum(axis=1, keepdims=True)).reshape(2, 3, 4)
    raw(out, "in0.bin", x)
    raw(out, "want0.bin", s.sum(axis=2, keepdims=True).astype(np.float32))


def external_data(out):
    rng = np.random.default_rng(4)
    w = rng.uniform(-1, 1, (8, 5)).astype(np.float32)
    x = rng.uniform(-1, 1, (3, 8)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    model = opset_model(nodes, [value("x", [3, 8])], [value("y", [3, 5])], 17, [numpy_helper.from_array(w, "w")])
    onnx.save_model(model, f"{out}/model.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.data", size_threshold=0)
    raw(out, "in0.bin", x)
    raw(out, "want0.bin", (x @ w).astype(np.float32))


def external_data_at(out, place):
    """external_data's model with its weights moved to `place` (a layout to check the rule
    that external data stays inside the model's folder): "parent" names ../outside/w.data;
    "link_out" ships a symlink to a file outside the folder; "link_in" a symlink to a file
    inside it; "cache" is a model cache's layout (snapshots/rev/ holding symlinks into
    blobs/, the model file among them), whose model.onnx is the link in snapshots/rev."""
    import os
    external_data(out)
    model = onnx.load(f"{out}/model.onnx", load_external_data=False)

    def relocate(location):
        for t in model.graph.initializer:
            for e in t.external_data:
                if e.key == "location":
                    e.value = location
        onnx.save(model, f"{out}/model.onnx")

    if place == "parent":
        os.makedirs(f"{out}/../outside", exist_ok=True)
        os.replace(f"{out}/weights.data", f"{out}/../outside/w.data")
        relocate("../outside/w.data")
    elif place == "link_out":
        os.makedirs(f"{out}/../outside", exist_ok=True)
        os.replace(f"{out}/weights.data", f"{out}/../outside/w.data")
        os.symlink(os.path.abspath(f"{out}/../outside/w.data"), f"{out}/link.data")
        relocate("link.data")
    elif place == "link_in":
        os.makedirs(f"{out}/sub", exist_ok=True)
        os.replace(f"{out}/weights.data", f"{out}/sub/w.data")
        os.symlink("sub/w.data", f"{out}/link.data")
        relocate("link.data")
    elif place == "cache":
        os.makedirs(f"{out}/blobs", exist_ok=True)
        os.makedirs(f"{out}/snapshots/rev", exist_ok=True)
        relocate("weights.data")
        os.replace(f"{out}/model.onnx", f"{out}/blobs/aaaa")
        os.replace(f"{out}/weights.data", f"{out}/blobs/bbbb")
        os.symlink("../../blobs/aaaa", f"{out}/snapshots/rev/model.onnx")
        os.symlink("../../blobs/bbbb", f"{out}/snapshots/rev/weights.data")
        for f in ("in0.bin", "want0.bin"):
            os.replace(f"{out}/{f}", f"{out}/snapshots/rev/{f}")


def oversized(out, kind):
    """A 100-byte model whose initializer declares [16384, 16384] elements (1 GiB of float,
    2 GiB of int64) and holds 4 bytes: raw_data ("float", "int64"), or an external file of 4
    bytes with no length given ("external")."""
    elem = TensorProto.INT64 if kind == "int64" else TensorProto.FLOAT
    w = TensorProto(name="w", data_type=elem, dims=[16384, 16384])
    if kind != "external":
        w.raw_data = b"\0\0\0\0"
    else:
        w.data_location = TensorProto.EXTERNAL
        w.external_data.add(key="location", value="w.data")
        with open(f"{out}/w.data", "wb") as f:
            f.write(b"\0\0\0\0")
    nodes = [helper.make_node("Shape", ["w"], ["y"])]
    model = opset_model(nodes, [], [value("y", [2], TensorProto.INT64)], 17, [w])
    with open(f"{out}/model.onnx", "wb") as f:
        f.write(model.SerializeToString())


def hostile(out, kind):
    """Small files that ask for much, for the refusals before any large allocation:
    "absolute_location" (external data at /etc/passwd), "typed_values" (3 float_data values
    for a shape of 2^28 elements), "truncated" (the first 4 KiB of a model whose 64 MiB
    initializer the file no longer holds), "huge_kernel" (a Conv of kernel 2^40) and
    "zero_stride" (a Conv of stride 0), "pool_zero_stride" (a MaxPool of stride 0, which
    ONNX's shape inference divides by). Written without ONNX's checker, which would refuse
    some of them before tlmc sees them."""
    x = value("x", [1, 1, 4, 4])
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    y = value("y", [1, 1, 4, 4])
    inits = []
    if kind == "absolute_location":
        w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
        w.data_location = TensorProto.EXTERNAL
        w.external_data.add(key="location", value="/etc/passwd")
        inits = [w]
        nodes = [helper.make_node("Add", ["x", "w"], ["y"])]
    elif kind == "typed_values":
        inits = [TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[16384, 16384],
                             float_data=[1.0, 2.0, 3.0])]
        nodes = [helper.make_node("Shape", ["w"], ["y"])]
        y = value("y", [2], TensorProto.INT64)
    elif kind in ("huge_kernel", "zero_stride"):
        k = 2 ** 40 if kind == "huge_kernel" else 3
        w = np.zeros((1, 1, 3, 3), np.float32)
        inits = [numpy_helper.from_array(w, "w")]
        attrs = {"kernel_shape": [k, 3], "strides": [0 if kind == "zero_stride" else 1, 1]}
        nodes = [helper.make_node("Conv", ["x", "w"], ["y"], **attrs)]
        y = value("y", [1, 1, 2, 2])
    elif kind == "pool_zero_stride":
        nodes = [helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2],
                                  strides=[0, 1])]
        y = value("y", [1, 1, 3, 3])
    graph = helper.make_graph(nodes, "hostile", [x], [y], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    data = model.SerializeToString()
    if kind == "truncated":
        big = numpy_helper.from_array(np.zeros(16 << 20, np.float32), "w")
        graph = helper.make_graph([helper.make_node("Shape", ["w"], ["y"])], "hostile", [],
                                  [value("y", [1], TensorProto.INT64)], initializer=[big])
        data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()[:4096]
    with open(f"{out}/model.onnx", "wb") as f:
        f.write(data)


def double_initializer(out):
    """A DOUBLE initializer Max reads: kept in float64, its values not float32's."""
    d = np.array([-10.0, 5.0, -10.0], dtype=np.float64)
    e = np.array([0.1, 1.0 + 2.0**-40, -3.3], dtype=np.float64)
    nodes = [helper.make_node("Max", ["d", "e"], ["y"])]
    save(opset_model(nodes, [value("d", [3], TensorProto.DOUBLE)],
                     [value("y", [3], TensorProto.DOUBLE)], 13,
                     [numpy_helper.from_array(e, "e")]), out)
    raw(out, "in0.bin", d)
    raw(out, "want0.bin", np.maximum(d, e))


def constants(out):
    """Constant nodes of every kind of value, and a DOUBLE initializer."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    b = np.array([0.5, -1.0, 2.0], dtype=np.float64)
    nodes = [
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.full((2, 3), 3.0, np.float32))),
        helper.make_node("Constant", [], ["k"], value_float=0.25),
        helper.make_node("Mul", ["x", "c"], ["xc"]),
        helper.make_node("Mul", ["xc", "k"], ["xk"]),
        helper.make_node("Add", ["xk", "b"], ["y"]),
    ]
    save(opset_model(nodes, [value("x", [2, 3])], [value("y", [2, 3])], 13, [numpy_helper.from_array(b, "b")]), out)
    raw(out, "in0.bin", x)
    raw(out, "want0.bin", (x * 3.0 * 0.25 + b).astype(np.float32))


def opset_too_new(out):
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    model = opset_model(nodes, [value("x", [2])], [value("y", [2])], 18)
    onnx.save(model, f"{out}/model.onnx")


def torch_cnn(out, opset):
    """A small CNN through torch.onnx.export: Conv, BatchNorm, ReLU, MaxPool, residual Add,
    adaptive average pooling, flatten and a Linear layer; PyTorch's own output to compare."""
    import torch

    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.bn1 = torch.nn.BatchNorm2d(8)
            self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
            self.bn2 = torch.nn.BatchNorm2d(8)
            self.fc = torch.nn.Linear(8, 5)

        def forward(self, x):
            y = torch.nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
            y = torch.relu(self.bn2(self.conv2(y)) + y)
            y = torch.nn.functional.adaptive_avg_pool2d(y, 1)
            return self.fc(torch.flatten(y, 1))

    net = Net().eval()
    for bn in (net.bn1, net.bn2):  # non-trivial running statistics
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 1.5)
    x = torch.randn(1, 3, 16, 16)
    torch.onnx.export(net, x, f"{out}/model.onnx", opset_version=opset, do_constant_folding=True)
    with torch.no_grad():
        raw(out, "in0.bin", x.numpy())
        raw(out, "want0.bin", net(x).numpy())


MODELS = {
    "unsupported": unsupported,
    "symbolic": symbolic,
    "opset11": lambda out: old_opset(out, 11),
    "external_data": external_data,
    "external_data_parent": lambda out: external_data_at(out, "parent"),
    "external_data_link_out": lambda out: external_data_at(out, "link_out"),
    "external_data_link_in": lambda out: external_data_at(out, "link_in"),
    "external_data_cache": lambda out: external_data_at(out, "cache"),
    "oversized_float": lambda out: oversized(out, "float"),
    "oversized_int64": lambda out: oversized(out, "int64"),
    "oversized_external": lambda out: oversized(out, "external"),
    "hostile_absolute_location": lambda out: hostile(out, "absolute_location"),
    "hostile_typed_values": lambda out: hostile(out, "typed_values"),
    "hostile_truncated": lambda out: hostile(out, "truncated"),
    "hostile_huge_kernel": lambda out: hostile(out, "huge_kernel"),
    "hostile_zero_stride": lambda out: hostile(out, "zero_stride"),
    "hostile_pool_zero_stride": lambda out: hostile(out, "pool_zero_stride"),
    "constants": constants,
    "double_initializer": double_initializer,
    "opset_too_new": opset_too_new,
    "torch_cnn_op13": lambda out: torch_cnn(out, 13),
    "torch_cnn_op17": lambda out: torch_cnn(out, 17),
}

if __name__ == "__main__":
    MODELS[sys.argv[1]](sys.argv[2])
