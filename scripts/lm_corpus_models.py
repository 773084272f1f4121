#!/usr/bin/python3
"""Exports the language model's corpus models to ONNX: torchvision's architectures and a
BERT and a GPT-2 built from their configurations, at several batch sizes, image sizes and
sequence lengths (random weights: nothing is downloaded).

    /usr/bin/python3 scripts/lm_corpus_models.py --out DIR [--only NAME,...] [--list]

Writes DIR/NAME.onnx for each variant (opset 17, fixed shapes, eval mode). A file that
exists is not exported again, so a killed run goes on where it stopped. A variant the
exporter cannot export is listed in DIR/failed.txt with its reason. The file names are what
`tlmc lm sample` is then given (docs/lm.md).

The benchmark models at their benchmark shapes (ResNet-50 and MobileNetV2 at 1x3x224x224,
BERT-base at [1, 128]) are exported too: `tlmc lm sample --hold-out` drops their subgraphs,
so those that other variants share never reach the corpus either.
"""

import argparse
import os
import sys
import zlib

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "zoo"))
import export_models as zoo  # noqa: E402  (the zoo's BERT and GPT-2, written as HF computes them)

tvm = torchvision.models


def vision(name, ctor, image, batch=1, **kwargs):
    return (f"{name}_b{batch}_{image}", lambda: ctor(weights=None, **kwargs),
            [("input", [batch, 3, image, image], torch.float32)])


def bert(name, layers, hidden, heads, seq, batch=1):
    class Config(zoo.BertConfig):
        pass
    Config.layers, Config.hidden, Config.heads = layers, hidden, heads
    Config.intermediate = 4 * hidden
    return (f"{name}_b{batch}_s{seq}", lambda: zoo.BertModel(Config()),
            [("input_ids", [batch, seq], torch.int64), ("attention_mask", [batch, seq], torch.int64),
             ("token_type_ids", [batch, seq], torch.int64)])


def gpt2(name, layers, hidden, heads, seq, batch=1):
    class Config(zoo.GPT2Config):
        pass
    Config.layers, Config.hidden, Config.heads = layers, hidden, heads
    return (f"{name}_b{batch}_s{seq}", lambda: zoo.GPT2LMHeadModel(Config()),
            [("input_ids", [batch, seq], torch.int64)])


def variants():
    v = []
    for image in (160, 224, 256):
        for name, ctor in [("resnet18", tvm.resnet18), ("resnet50", tvm.resnet50),
                           ("mobilenet_v2", tvm.mobilenet_v2),
                           ("mobilenet_v3_small", tvm.mobilenet_v3_small),
                           ("mobilenet_v3_large", tvm.mobilenet_v3_large),
                           ("efficientnet_b0", tvm.efficientnet_b0),
                           ("shufflenet_v2_x1_0", tvm.shufflenet_v2_x1_0),
                           ("squeezenet1_1", tvm.squeezenet1_1),
                           ("regnet_y_400mf", tvm.regnet_y_400mf),
                           ("densenet121", tvm.densenet121)]:
            v.append(vision(name, ctor, image))
    for batch in (2, 4):
        for name, ctor in [("resnet34", tvm.resnet34), ("resnet50", tvm.resnet50),
                           ("mobilenet_v2", tvm.mobilenet_v2)]:
            v.append(vision(name, ctor, 224, batch))
    for name, ctor in [("resnext50_32x4d", tvm.resnext50_32x4d),
                       ("wide_resnet50_2", tvm.wide_resnet50_2), ("vgg11", tvm.vgg11),
                       ("regnet_x_800mf", tvm.regnet_x_800mf), ("convnext_tiny", tvm.convnext_tiny),
                       ("squeezenet1_0", tvm.squeezenet1_0), ("efficientnet_b2", tvm.efficientnet_b2)]:
        v.append(vision(name, ctor, 224))
    v.append(vision("inception_v3", tvm.inception_v3, 299, aux_logits=False, init_weights=True))
    v.append(vision("vit_b_16", tvm.vit_b_16, 224))
    v.append(("vit_small_b1_128",
              lambda: tvm.VisionTransformer(image_size=128, patch_size=16, num_layers=4,
                                            num_heads=6, hidden_dim=384, mlp_dim=1536),
              [("input", [1, 3, 128, 128], torch.float32)]))
    for seq in (64, 128, 256):
        v.append(bert("bert_base", 12, 768, 12, seq))
        v.append(bert("bert_small", 4, 512, 8, seq))
        v.append(gpt2("gpt2_small", 12, 768, 12, seq))
    v.append(bert("bert_mini", 4, 256, 4, 128, batch=4))
    v.append(gpt2("gpt2_medium_width", 4, 1024, 16, 128))
    return v


def export(out, name, ctor, inputs):
    torch.manual_seed(zlib.crc32(name.encode()) & 0x7FFFFFFF)
    model = ctor().eval()
    args = tuple(torch.ones(shape, dtype=dtype) if dtype == torch.int64 else torch.randn(shape)
                 for (_, shape, dtype) in inputs)
    path = os.path.join(out, name + ".onnx")
    tmp = path + ".tmp"
    # With gradients on: in eval mode under no_grad, torch's transformer layers take a fused
    # attention kernel the ONNX exporter cannot write.
    torch.onnx.export(model, args, tmp, opset_version=17, do_constant_folding=True,
                      input_names=[n for (n, _, _) in inputs],
                      training=torch.onnx.TrainingMode.EVAL)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=False)
    p.add_argument("--only", default="")
    p.add_argument("--list", action="store_true")
    a = p.parse_args()
    todo = variants()
    if a.only:
        wanted = set(a.only.split(","))
        todo = [t for t in todo if t[0] in wanted]
    if a.list:
        for name, _, inputs in todo:
            print(name, " ".join(f"{n}={'x'.join(map(str, s))}" for (n, s, _) in inputs))
        return 0
    if not a.out:
        p.error("--out DIR is needed")
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for i, (name, ctor, inputs) in enumerate(todo, 1):
        if os.path.exists(os.path.join(a.out, name + ".onnx")):
            continue
        try:
            export(a.out, name, ctor, inputs)
            print(f"lm_corpus_models: [{i}/{len(todo)}] {name}", file=sys.stderr, flush=True)
        except Exception as e:  # noqa: BLE001  (an exporter failure lists the variant, goes on)
            with open(os.path.join(a.out, "failed.txt"), "a") as f:
                f.write(f"{name}\t{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}\n")
            print(f"lm_corpus_models: [{i}/{len(todo)}] {name}: failed ({e})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
