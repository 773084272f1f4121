#!/usr/bin/python3
"""Exports the model zoo to ONNX with PyTorch, beside random inputs and PyTorch's outputs.

    /usr/bin/python3 tests/zoo/export_models.py --out DIR [--models resnet50,gpt2] [--opsets 13,17]
    /usr/bin/python3 tests/zoo/export_models.py --out DIR --exports resnet50:17,gpt2:13
    /usr/bin/python3 tests/zoo/export_models.py --list

Run it with Debian's python3 (python3-torch 1.13, python3-torchvision 0.14, python3-onnx):
nothing is downloaded, every weight is random. For each model it writes

    DIR/<model>_op<N>.onnx     one per opset, torch.onnx.export(do_constant_folding=True),
                               eval mode, fixed input shapes (no dynamic_axes)
    DIR/<model>_input<i>.bin   the random inputs, in the graph's input order
    DIR/<model>_output<i>.bin  PyTorch's outputs (eager, float32), in the graph's order
    DIR/manifest.json          what is where: one entry per (model, opset)

Tensors are raw little-endian arrays, row-major, no header: float32 for images and
activations, int64 for token ids and attention masks. Inputs and outputs do not depend on
the opset, so both opsets of a model share them.

Deterministic: each model is built and its inputs drawn from torch.manual_seed(seed), the
seed derived from the model's name (so a subset exports the same bytes as the full set).
Convolutional networks get realistic BatchNorm statistics by one forward pass in training
mode on random data (momentum None: the batch's own statistics) before eval mode, so that
their activations stay O(1) through 50+ layers; transformers use the usual N(0, 0.02)
initialisation, with random biases and LayerNorm affine parameters (not the zeros and
ones of a fresh model) so that the test sees every parameter.

An entry whose files exist and were written by this same script (its SHA-256 is in the
manifest) with the same torch and torchvision is not exported again; --force exports anyway.

The manifest also records, for each output, the largest |PyTorch float32 - PyTorch
float64| (the same model and inputs evaluated in double precision): the rounding noise of
float32 itself, which the test's tolerances must leave room for.
"""

import argparse
import copy
import hashlib
import json
import math
import os
import sys
import time
import zlib

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

OPSETS = (13, 17)

# ---------------------------------------------------------------------------------------
# DCGAN generator (Radford et al. 2016; the PyTorch examples' dcgan/main.py `Generator`):
# z [N, nz, 1, 1] -> image [N, nc, 64, 64] by five ConvTranspose2d (kernel 4), BatchNorm and
# ReLU between them, Tanh at the end.


class DCGANGenerator(nn.Module):
    def __init__(self, nz=100, ngf=64, nc=3):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False),  # 4x4
            nn.BatchNorm2d(ngf * 8),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False),  # 8x8
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),  # 16x16
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),  # 32x32
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),  # 64x64
            nn.Tanh(),
        )
        # The example's weights_init: conv weights N(0, 0.02), BatchNorm weights N(1, 0.02).
        for m in self.modules():
            if isinstance(m, nn.ConvTranspose2d):
                nn.init.normal_(m.weight, 0.0, 0.02)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.normal_(m.weight, 1.0, 0.02)
                nn.init.zeros_(m.bias)

    def forward(self, z):
        return self.main(z)


# ---------------------------------------------------------------------------------------
# BERT-base encoder, written as Hugging Face's BertModel (modeling_bert.py) computes it:
# token + position + segment embeddings, LayerNorm; 12 post-LayerNorm layers of 12-head
# self-attention and a GELU (erf) feed-forward of 3072; the pooler (tanh of a dense layer
# on the first token). The attention mask [N, S] (1 keep, 0 padding) becomes an additive
# mask (1 - mask) * float32 min, broadcast over heads and queries.


class BertConfig:
    vocab_size = 30522
    hidden = 768
    layers = 12
    heads = 12
    intermediate = 3072
    max_positions = 512
    type_vocab = 2
    ln_eps = 1e-12


class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden)
        self.position_embeddings = nn.Embedding(c.max_positions, c.hidden)
        self.token_type_embeddings = nn.Embedding(c.type_vocab, c.hidden)
        self.LayerNorm = nn.LayerNorm(c.hidden, eps=c.ln_eps)
        self.register_buffer("position_ids", torch.arange(c.max_positions).expand((1, -1)))

    def forward(self, input_ids, token_type_ids):
        seq_length = input_ids.size()[1]
        position_ids = self.position_ids[:, 0:seq_length]
        x = (self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
             + self.position_embeddings(position_ids))
        return self.LayerNorm(x)


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_heads = c.heads
        self.head_size = c.hidden // c.heads
        self.all_head_size = self.num_heads * self.head_size
        self.query = nn.Linear(c.hidden, self.all_head_size)
        self.key = nn.Linear(c.hidden, self.all_head_size)
        self.value = nn.Linear(c.hidden, self.all_head_size)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_heads, self.head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        q = self.transpose_for_scores(self.query(hidden_states))
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        scores = scores + attention_mask
        probs = F.softmax(scores, dim=-1)
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        new_shape = context.size()[:-2] + (self.all_head_size,)
        return context.view(new_shape)


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertSelfAttention(c)
        self.attention_output = nn.Linear(c.hidden, c.hidden)
        self.attention_norm = nn.LayerNorm(c.hidden, eps=c.ln_eps)
        self.intermediate = nn.Linear(c.hidden, c.intermediate)
        self.output = nn.Linear(c.intermediate, c.hidden)
        self.output_norm = nn.LayerNorm(c.hidden, eps=c.ln_eps)

    def forward(self, x, attention_mask):
        a = self.attention_norm(self.attention_output(self.attention(x, attention_mask)) + x)
        h = F.gelu(self.intermediate(a))  # exact GELU: 0.5 x (1 + erf(x / sqrt 2))
        return self.output_norm(self.output(h) + a)


class BertModel(nn.Module):
    def __init__(self, c=BertConfig()):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.layers = nn.ModuleList([BertLayer(c) for _ in range(c.layers)])
        self.pooler = nn.Linear(c.hidden, c.hidden)
        init_transformer(self)

    def forward(self, input_ids, attention_mask, token_type_ids):
        # get_extended_attention_mask: [N, S] -> [N, 1, 1, S], 0 to keep, float min to drop.
        extended = attention_mask[:, None, None, :].to(dtype=self.pooler.weight.dtype)
        extended = (1.0 - extended) * torch.finfo(extended.dtype).min
        x = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            x = layer(x, extended)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


# ---------------------------------------------------------------------------------------
# GPT-2 small, written as Hugging Face's GPT2LMHeadModel (modeling_gpt2.py) computes it:
# token + position embeddings; 12 pre-LayerNorm blocks of 12-head causal self-attention
# (the fused c_attn projection split into q, k, v; the causal mask a slice of a
# torch.tril buffer applied with torch.where and float32 min) and a "gelu_new" (tanh
# approximation) MLP of 3072; final LayerNorm; the output head tied to the token embedding.
# Conv1D is GPT-2's transposed linear layer: addmm(bias, x, weight[in, out]).


class GPT2Config:
    vocab_size = 50257
    n_positions = 1024
    hidden = 768
    layers = 12
    heads = 12
    ln_eps = 1e-5


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                       * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        n = c.n_positions
        self.register_buffer(
            "bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n))
        self.num_heads = c.heads
        self.head_dim = c.hidden // c.heads
        self.split_size = c.hidden
        self.c_attn = Conv1D(3 * c.hidden, c.hidden)
        self.c_proj = Conv1D(c.hidden, c.hidden)

    def _split_heads(self, tensor):
        new_shape = tensor.size()[:-1] + (self.num_heads, self.head_dim)
        return tensor.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (self.num_heads * self.head_dim,)
        return tensor.view(new_shape)

    def _attn(self, query, key, value):
        w = torch.matmul(query, key.transpose(-1, -2))
        w = w / torch.full([], value.size(-1) ** 0.5, dtype=w.dtype, device=w.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length, :key_length]
        mask_value = torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype, device=w.device)
        w = torch.where(causal_mask, w, mask_value)
        w = F.softmax(w, dim=-1)
        return torch.matmul(w, value)

    def forward(self, x):
        query, key, value = self.c_attn(x).split(self.split_size, dim=2)
        out = self._attn(self._split_heads(query), self._split_heads(key),
                         self._split_heads(value))
        return self.c_proj(self._merge_heads(out))


class GPT2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c.hidden, eps=c.ln_eps)
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(c.hidden, eps=c.ln_eps)
        self.c_fc = Conv1D(4 * c.hidden, c.hidden)
        self.c_proj = Conv1D(c.hidden, 4 * c.hidden)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(gelu_new(self.c_fc(self.ln_2(x))))


class GPT2LMHeadModel(nn.Module):
    def __init__(self, c=GPT2Config()):
        super().__init__()
        self.wte = nn.Embedding(c.vocab_size, c.hidden)
        self.wpe = nn.Embedding(c.n_positions, c.hidden)
        self.h = nn.ModuleList([GPT2Block(c) for _ in range(c.layers)])
        self.ln_f = nn.LayerNorm(c.hidden, eps=c.ln_eps)
        self.lm_head = nn.Linear(c.hidden, c.vocab_size, bias=False)
        init_transformer(self)
        # GPT-2's special scaling of the residual projections: N(0, 0.02 / sqrt(2 layers)).
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * c.layers))
        self.lm_head.weight = self.wte.weight  # tied output head

    def forward(self, input_ids):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        position_ids = torch.arange(0, input_shape[-1], dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        x = self.wte(input_ids) + self.wpe(position_ids)
        for block in self.h:
            x = block(x)
        x = self.ln_f(x)
        return self.lm_head(x)


def init_transformer(model):
    """N(0, 0.02) weights and embeddings (as Hugging Face initialises both models), with
    small random biases and LayerNorm parameters instead of zeros and ones."""
    for m in model.modules():
        if isinstance(m, (nn.Linear, Conv1D)):
            nn.init.normal_(m.weight, 0.0, 0.02)
            if m.bias is not None:
                nn.init.normal_(m.bias, 0.0, 0.02)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, 0.0, 0.02)
        elif isinstance(m, nn.LayerNorm):
            nn.init.normal_(m.weight, 1.0, 0.1)
            nn.init.normal_(m.bias, 0.0, 0.1)


# ---------------------------------------------------------------------------------------
# The zoo. Each model: a constructor, its inputs (name, shape, dtype, generator) and the
# names of its outputs. Shapes follow bench/README.md (batch 1; images 224x224; sequences
# of 128 tokens); the video network takes the usual 16 frames of 112x112.


def image_input(name, shape):
    return (name, shape, torch.float32, lambda g: torch.randn(shape, generator=g))


def token_ids(name, shape, vocab):
    return (name, shape, torch.int64, lambda g: torch.randint(0, vocab, shape, generator=g))


def bert_mask(g):
    # One sequence of 128 tokens whose last ones are padding (between 1 and 32 of them).
    valid = 128 - int(torch.randint(1, 33, (1,), generator=g))
    mask = torch.ones(1, 128, dtype=torch.int64)
    mask[:, valid:] = 0
    return mask


def bert_segments(g):
    # Two segments (sentence A, then sentence B), split at a random point.
    split = int(torch.randint(16, 112, (1,), generator=g))
    seg = torch.zeros(1, 128, dtype=torch.int64)
    seg[:, split:] = 1
    return seg


def tv(fn, **kwargs):
    return lambda: fn(weights=None, **kwargs)


IMAGE = [image_input("input", [1, 3, 224, 224])]
MODELS = {
    "resnet50": (tv(torchvision.models.resnet50), IMAGE, ["logits"]),
    "mobilenet_v2": (tv(torchvision.models.mobilenet_v2), IMAGE, ["logits"]),
    "resnext50_32x4d": (tv(torchvision.models.resnext50_32x4d), IMAGE, ["logits"]),
    "densenet121": (tv(torchvision.models.densenet121), IMAGE, ["logits"]),
    "wide_resnet50_2": (tv(torchvision.models.wide_resnet50_2), IMAGE, ["logits"]),
    "dcgan": (DCGANGenerator, [image_input("z", [1, 100, 1, 1])], ["image"]),
    "r3d_18": (tv(torchvision.models.video.r3d_18), [image_input("video", [1, 3, 16, 112, 112])],
               ["logits"]),
    "bert": (BertModel,
             [token_ids("input_ids", [1, 128], BertConfig.vocab_size),
              ("attention_mask", [1, 128], torch.int64, bert_mask),
              ("token_type_ids", [1, 128], torch.int64, bert_segments)],
             ["last_hidden_state", "pooler_output"]),
    "gpt2": (GPT2LMHeadModel, [token_ids("input_ids", [1, 128], GPT2Config.vocab_size)],
             ["logits"]),
}


def model_seed(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def calibrate_batchnorm(model, inputs):
    """BatchNorm running statistics from one forward pass in training mode on other random
    data of the input's shape, so that eval mode normalises to O(1) activations."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average: after one batch, that batch's statistics
    model.train()
    with torch.no_grad():
        model(*[torch.randn(x.shape) for x in inputs])
    model.eval()


def build(name):
    """The model in eval mode, its inputs and PyTorch's float32 outputs, deterministically."""
    ctor, input_specs, output_names = MODELS[name]
    torch.manual_seed(model_seed(name))
    model = ctor()
    g = torch.Generator().manual_seed(model_seed(name) + 1)
    inputs = [make(g) for (_, _, _, make) in input_specs]
    for x, (iname, shape, dtype, _) in zip(inputs, input_specs):
        assert list(x.shape) == shape and x.dtype == dtype, iname
    calibrate_batchnorm(model, inputs)
    model.eval()
    with torch.inference_mode():
        outputs = model(*inputs)
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    assert len(outputs) == len(output_names), name
    return model, inputs, [o.contiguous() for o in outputs]


def float64_error(model, inputs, outputs):
    """Largest |float32 - float64| per output: PyTorch's own float32 rounding noise."""
    m64 = copy.deepcopy(model).double()
    with torch.inference_mode():
        want = m64(*[x.double() if x.is_floating_point() else x for x in inputs])
    if isinstance(want, torch.Tensor):
        want = (want,)
    return [float((o.double() - w).abs().max()) for o, w in zip(outputs, want)]


def dtype_name(dtype):
    return {torch.float32: "float32", torch.int64: "int64"}[dtype]


def write_atomically(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def tensor_bytes(t):
    a = t.detach().cpu().numpy()
    return a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes(order="C")


def export_onnx(model, inputs, input_names, output_names, opset, path):
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, tuple(inputs), tmp, opset_version=opset,
                          do_constant_folding=True, input_names=input_names,
                          output_names=output_names, training=torch.onnx.TrainingMode.EVAL)
    # The graph's inputs and outputs must be the ones written beside it, in that order (the
    # exporter would silently drop an input the model does not use).
    proto = onnx.load(tmp)
    initializers = {i.name for i in proto.graph.initializer}
    graph_inputs = [i.name for i in proto.graph.input if i.name not in initializers]
    graph_outputs = [o.name for o in proto.graph.output]
    if graph_inputs != input_names or graph_outputs != output_names:
        raise RuntimeError(f"{path}: graph inputs {graph_inputs}, outputs {graph_outputs}; "
                           f"expected {input_names}, {output_names}")
    ops = {}
    for node in proto.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    os.replace(tmp, path)
    return dict(sorted(ops.items()))


def script_fingerprint():
    with open(os.path.abspath(__file__), "rb") as f:
        h = hashlib.sha256(f.read())
    return h.hexdigest()


def load_manifest(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def parse_pairs(models, opsets, exports):
    """(model, opset) pairs from --exports "m:17,n:13", else the product of the lists."""
    if exports:
        pairs = []
        for item in exports.split(","):
            model, _, opset = item.strip().partition(":")
            pairs.append((model, int(opset) if opset.isdigit() else -1))
    else:
        pairs = [(m.strip(), int(o)) for m in models.split(",") if m.strip()
                 for o in opsets.split(",")]
    for model, opset in pairs:
        if model not in MODELS:
            raise ValueError(f"unknown model '{model}' (known: {', '.join(MODELS)})")
        if opset not in OPSETS:
            raise ValueError(f"{model}: opset {opset}; this script exports opsets "
                             f"{', '.join(map(str, OPSETS))}")
    return pairs


def export(out, pairs, force=False):
    """Exports each (model, opset) of `pairs` into the folder `out` unless it is up to date
    there; returns the manifest (also written to out/manifest.json)."""
    os.makedirs(out, exist_ok=True)
    manifest_path = os.path.join(out, "manifest.json")
    manifest = load_manifest(manifest_path)
    fingerprint = {"script_sha256": script_fingerprint(), "torch": torch.__version__,
                   "torchvision": torchvision.__version__, "onnx": onnx.__version__}
    if {k: manifest.get(k) for k in fingerprint} != fingerprint:
        manifest = {}  # another script or library version: nothing in it is reused
    manifest = dict({"generator": "tests/zoo/export_models.py"}, **fingerprint,
                    models=manifest.get("models", {}), exports=manifest.get("exports", []))

    def files_exist(entry):
        files = [entry["onnx"]] + [t["file"] for t in entry["inputs"] + entry["outputs"]]
        return all(os.path.exists(os.path.join(out, f)) for f in files)

    def save():
        manifest["exports"].sort(key=lambda e: (list(MODELS).index(e["model"]), e["opset"]))
        write_atomically(manifest_path, (json.dumps(manifest, indent=1) + "\n").encode())

    done = {(e["model"], e["opset"]): e for e in manifest["exports"]}
    todo = {}
    for model, opset in pairs:
        e = done.get((model, opset))
        if e and files_exist(e) and not force:
            print(f"{model} opset {opset}: up to date", flush=True)
        elif opset not in todo.get(model, []):
            todo.setdefault(model, []).append(opset)

    total = time.monotonic()
    for name, opsets in todo.items():
        t0 = time.monotonic()
        model, inputs, outputs = build(name)
        _, input_specs, output_names = MODELS[name]
        input_names = [n for n, _, _, _ in input_specs]
        err64 = float64_error(model, inputs, outputs)
        tensors = {"inputs": [], "outputs": []}
        for i, (x, n) in enumerate(zip(inputs, input_names)):
            f = f"{name}_input{i}.bin"
            write_atomically(os.path.join(out, f), tensor_bytes(x))
            tensors["inputs"].append({"name": n, "file": f, "dtype": dtype_name(x.dtype),
                                      "shape": list(x.shape)})
        for i, (y, n, e) in enumerate(zip(outputs, output_names, err64)):
            f = f"{name}_output{i}.bin"
            write_atomically(os.path.join(out, f), tensor_bytes(y))
            tensors["outputs"].append({"name": n, "file": f, "dtype": dtype_name(y.dtype),
                                       "shape": list(y.shape),
                                       "max_abs_value": float(y.abs().max()),
                                       "float32_vs_float64_max_abs": e})
        build_s = time.monotonic() - t0
        print(f"{name}: model, inputs and outputs in {build_s:.1f} s "
              f"(float32 vs float64: {', '.join(f'{e:.2e}' for e in err64)})", flush=True)
        manifest["models"][name] = {"seed": model_seed(name), "build_seconds": round(build_s, 2)}
        for opset in opsets:
            t1 = time.monotonic()
            path = os.path.join(out, f"{name}_op{opset}.onnx")
            ops = export_onnx(model, inputs, input_names, output_names, opset, path)
            secs = time.monotonic() - t1
            size = os.path.getsize(path)
            print(f"{name} opset {opset}: exported in {secs:.1f} s ({size / 2**20:.1f} MiB; "
                  f"{sum(ops.values())} nodes: {', '.join(ops)})", flush=True)
            entry = {"model": name, "opset": opset, "onnx": os.path.basename(path),
                     "onnx_bytes": size, "export_seconds": round(secs, 2), "ops": ops}
            entry.update(tensors)
            manifest["exports"] = [e for e in manifest["exports"]
                                   if (e["model"], e["opset"]) != (name, opset)] + [entry]
            save()  # after each export: an interrupted run keeps what it finished
        del model
    if todo:
        print(f"exported in {time.monotonic() - total:.1f} s", flush=True)
    save()
    return manifest


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="output folder (created if needed)")
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated models (default: all): " + ", ".join(MODELS))
    ap.add_argument("--opsets", default=",".join(map(str, OPSETS)),
                    help="comma-separated opsets (default: 13,17)")
    ap.add_argument("--exports", help="comma-separated MODEL:OPSET pairs, instead of the "
                    "product of --models and --opsets")
    ap.add_argument("--force", action="store_true", help="export even what is up to date")
    ap.add_argument("--list", action="store_true", help="print the models and exit")
    args = ap.parse_args()
    if args.list:
        for name, (_, specs, outs) in MODELS.items():
            ins = ", ".join(f"{n} {dtype_name(d)}{s}" for n, s, d, _ in specs)
            print(f"{name}: {ins} -> {', '.join(outs)}")
        return 0
    if not args.out:
        ap.error("--out DIR is required")
    try:
        pairs = parse_pairs(args.models, args.opsets, args.exports)
    except ValueError as e:
        ap.error(str(e))
    export(args.out, pairs, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
